"""Branches for another accelerator are never rewritten; device tables get an "npu" entry."""
import torch

SUPPORTED = ["cuda", "npu", "xpu", "hpu"]  # expect: DEV024
EMPTY_CACHE = {"cuda": torch.cuda.empty_cache, "xpu": torch.xpu.empty_cache}  # expect: DEV010


def place(model):
    if torch.xpu.is_available():
        model.to(f"cuda:{torch.xpu.current_device()}")
    elif torch.backends.mps.is_available():
        model.to("mps")
    return model


def synchronize(device):
    if device.type == "xpu":
        torch.xpu.synchronize()
    elif device.type == "mps":
        torch.mps.synchronize()
