import torch


def reduce():
    return torch.npu.max_memory_allocated()  # expect: DEV010
