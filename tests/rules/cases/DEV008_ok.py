import torch

torch.npu.set_device(0)
n = torch.accelerator.device_count()
torch.npu.synchronize()
obj.cuda.synchronize()
x.device_count()
torch.cuda.empty_cache()  # DEV010's


def wait(device):
    if device.type == "cuda":
        torch.cuda.synchronize()
    elif device.type == "npu":
        torch.npu.synchronize()


def wait_flag(use_npu):
    if use_npu:
        torch.npu.synchronize()
    else:
        torch.cuda.synchronize()


def wait_any():
    if torch.npu.is_available():
        torch.npu.synchronize()
    elif torch.cuda.is_available():
        torch.cuda.synchronize()
