"""What the agnostic target must keep: behaviour on CPU, CUDA and MPS."""
from .utils import is_torch_available

if is_torch_available():
    import torch
    import torch.distributed as dist
    DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"


def place(model, local_rank):
    device = torch.device(DEVICE_TYPE, local_rank)  # expect: DEV003
    model.to(device)  # expect: DEV001
    return device


def autocast_dtype():
    try:
        return torch.get_autocast_dtype(DEVICE_TYPE)  # expect: DEV024
    except AttributeError:
        return torch.get_autocast_gpu_dtype()  # expect: AMP005


def bf16_ok():
    return DEVICE_TYPE != "cpu" and torch.get_device_module(DEVICE_TYPE).is_bf16_supported()  # expect: DEV007, DEV009


def reserved():
    return torch.cuda.memory_reserved() if torch.cuda.is_available() else 0  # expect: DEV007, DEV010


def amp_type(device):
    device_type = DEVICE_TYPE if ("cuda" in device or "npu" in device) else "cpu"  # expect: DEV024, DEV023
    return torch.autocast(device_type=device_type)


CAPABLE = ("cuda", "npu", "xpu")  # expect: DEV024
