import torch

from .utils import is_torch_npu_available

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

if is_torch_npu_available():
    import torch_npu  # noqa: F401


def to_device(x):
    return x.to(DEVICE_TYPE)  # expect: DEV001
