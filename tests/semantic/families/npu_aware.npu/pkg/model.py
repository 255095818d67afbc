import torch

from .utils import is_torch_npu_available

if is_torch_npu_available():
    import torch_npu  # noqa: F401


def to_device(x):
    return x.npu()  # expect: DEV001
