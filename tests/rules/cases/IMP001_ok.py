import importlib

import torch

try:
    import torch_npu  # noqa: F401
except ImportError:
    torch_npu = None


def fused_norm(x, w):
    if torch_npu is None:
        return torch.nn.functional.layer_norm(x, x.shape[-1:], w)
    return torch_npu.npu_rms_norm(x, w)[0]


def lazy(name="torch_npu"):
    mod = importlib.import_module(name)
    return mod


class Holder:
    torch_npu = None  # an attribute, not the module
