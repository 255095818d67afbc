"""``backend="hccl"``: a ProcessGroup that runs the collectives of npu tensors over gloo between real
processes (the npu tensors' memory is shared with the CPU views gloo works on), and rejects CPU tensors as
ProcessGroupHCCL does ("No backend type associated with device type cpu")."""

from __future__ import annotations

import torch

from ascendify.run import common


def _cpu(t):
    if isinstance(t, torch.Tensor):
        if common.Ops.is_npu(t):
            return common.Ops.to_cpu(t)
        raise RuntimeError(f"No backend type associated with device type {t.device.type}")
    if isinstance(t, (list, tuple)):
        return [_cpu(x) for x in t]
    return t


def install() -> bool:
    import torch.distributed as dist

    if not dist.is_available():
        return False
    ProcessGroup = dist.ProcessGroup

    class ProcessGroupHCCL(ProcessGroup):
        def __init__(self, store, rank, size, timeout):
            super().__init__(rank, size)
            self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)

        def getBackendName(self):
            return "hccl"

        def name(self):
            return "hccl"

        def allreduce(self, tensors, opts=None):
            return self._gloo.allreduce(_cpu(tensors), opts or dist.AllreduceOptions())

        def allreduce_coalesced(self, tensors, opts=None):
            return self._gloo.allreduce_coalesced(_cpu(tensors), opts or dist.AllreduceCoalescedOptions())

        def broadcast(self, tensors, opts=None):
            return self._gloo.broadcast(_cpu(tensors), opts or dist.BroadcastOptions())

        def allgather(self, outputs, inputs, opts=None):
            return self._gloo.allgather(_cpu(outputs), _cpu(inputs),
                                        opts or dist.AllgatherOptions())

        def _allgather_base(self, output, input, opts=None):
            return self._gloo._allgather_base(_cpu(output), _cpu(input),
                                              opts or dist.AllgatherOptions())

        def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
            return self._gloo.allgather_into_tensor_coalesced(_cpu(outputs), _cpu(inputs),
                                                              opts or dist.AllgatherOptions())

        def reduce_scatter(self, outputs, inputs, opts=None):
            return self._gloo.reduce_scatter(_cpu(outputs), _cpu(inputs),
                                             opts or dist.ReduceScatterOptions())

        def _reduce_scatter_base(self, output, input, opts=None):
            return self._gloo._reduce_scatter_base(_cpu(output), _cpu(input),
                                                   opts or dist.ReduceScatterOptions())

        def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts=None):
            return self._gloo.reduce_scatter_tensor_coalesced(_cpu(outputs),
                                                              _cpu(inputs),
                                                              opts or dist.ReduceScatterOptions())

        def reduce(self, tensors, opts=None):
            return self._gloo.reduce(_cpu(tensors), opts or dist.ReduceOptions())

        def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
            return self._gloo.alltoall_base(_cpu(output), _cpu(input), output_split_sizes,
                                            input_split_sizes, opts or dist.AllToAllOptions())

        def alltoall(self, outputs, inputs, opts=None):
            return self._gloo.alltoall(_cpu(outputs), _cpu(inputs),
                                       opts or dist.AllToAllOptions())

        def gather(self, outputs, inputs, opts=None):
            return self._gloo.gather(_cpu(outputs), _cpu(inputs), opts or dist.GatherOptions())

        def scatter(self, outputs, inputs, opts=None):
            return self._gloo.scatter(_cpu(outputs), _cpu(inputs), opts or dist.ScatterOptions())

        def send(self, tensors, dst, tag=0):
            return self._gloo.send(_cpu(tensors), dst, tag)

        def recv(self, tensors, src, tag=0):
            return self._gloo.recv(_cpu(tensors), src, tag)

        def barrier(self, opts=None):
            return self._gloo.barrier(opts or dist.BarrierOptions())

        # the names torch >= 2.9 calls
        def all_gather_single(self, output, input, opts=None):
            return self._allgather_base(output, input, opts)

        def reduce_scatter_single(self, output, input, opts=None):
            return self._reduce_scatter_base(output, input, opts)

        def all_to_all_single(self, output, input, output_split_sizes, input_split_sizes, opts=None):
            return self.alltoall_base(output, input, output_split_sizes, input_split_sizes, opts)

    if "HCCL" not in dist.Backend._plugins:
        dist.Backend.register_backend("hccl", lambda store, rank, size, timeout: ProcessGroupHCCL(
            store, rank, size, timeout), devices=["npu"])
    return True
