import importlib.util


def is_torch_cuda_available():
    import torch

    return torch.cuda.is_available()  # expect: DEV007


def is_torch_npu_available():
    return importlib.util.find_spec("torch_npu") is not None
