"""A library that already supports Ascend: nothing is added, its CUDA side stays as written."""
import importlib.util

import torch

if importlib.util.find_spec("torch_npu") is not None:
    import torch_npu  # noqa: F401


def is_torch_npu_available():
    return hasattr(torch, "npu") and torch.npu.is_available()


def empty_cache():
    if is_torch_npu_available():
        torch.npu.empty_cache()
    elif torch.cuda.is_available():
        torch.cuda.empty_cache()


def device_name():
    if hasattr(torch, "npu") and torch.npu.is_available():
        return "npu"
    return "cuda" if torch.cuda.is_available() else "cpu"
