import torch
import torch.distributed as dist


class NativeScaler:
    def __init__(self):
        self._scaler = torch.npu.amp.GradScaler()  # expect: AMP001

    def __call__(self, loss, optimizer):
        self._scaler.scale(loss).backward()
        self._scaler.step(optimizer)  # expect: AMP003
        self._scaler.update()


class CudaTimer:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        torch.npu.synchronize()  # expect: DEV008


class MetricLogger:
    def __init__(self):
        self.meters = {}

    def update(self, **kw):
        self.meters.update(kw)

    def log_every(self, it):
        torch.npu.synchronize()  # expect: DEV008
        return it

    def synchronize_between_processes(self):
        t = torch.tensor([len(self.meters)], device="npu")  # expect: DEV004
        dist.all_reduce(t)


class StreamBase:
    def __init__(self):
        self.stream = torch.npu.Stream()  # expect: DEV012


class Prefetcher(StreamBase):
    def next(self, batch):
        return batch
