import torch

if x.device.type == "npu":
    pass
if name == "cudatoolkit":
    pass
same = backend == "nccl"
ok = path.startswith("cuda_kernels/")
ok2 = str(device).startswith("cud")


def sync(device):
    # already dispatches per device: the CUDA branch is right as it is
    if device.type == "cuda":
        torch.cuda.synchronize()
    elif device.type == "npu":
        torch.npu.synchronize()


class Prefetcher:
    def __init__(self, device):
        self.is_cuda = device.type == "cuda" and torch.cuda.is_available()
        self.is_npu = device.type == "npu" and torch.npu.is_available()


accel = device.type in ("cuda", "npu")


def check_device(device_type):
    if device_type == "cuda":
        assert torch.cuda.is_available()
    if device_type == "npu":
        assert torch.npu.is_available()
on_accel = x.device.type == "cuda" or x.device.type == "npu"
