"""What the agnostic target must keep: behaviour on CPU, CUDA and MPS."""
from .utils import is_torch_available

if is_torch_available():
    import torch
    import torch.distributed as dist


def place(model, local_rank):
    device = torch.device("npu", local_rank)  # expect: DEV003
    model.npu(device)  # expect: DEV001
    return device


def autocast_dtype():
    try:
        return torch.get_autocast_dtype("npu")  # expect: DEV024
    except AttributeError:
        return torch.get_autocast_gpu_dtype()  # expect: AMP005


def bf16_ok():
    return torch.npu.is_available() and torch.npu.is_bf16_supported()  # expect: DEV007, DEV009


def reserved():
    return torch.npu.memory_reserved() if torch.npu.is_available() else 0  # expect: DEV007, DEV010


def amp_type(device):
    device_type = "npu" if "npu" in device else "cpu"  # expect: DEV024, DEV023
    return torch.autocast(device_type=device_type)


CAPABLE = ("cuda", "npu", "xpu")  # expect: DEV024
