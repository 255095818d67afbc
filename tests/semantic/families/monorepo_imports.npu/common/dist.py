import torch


def setup(rank):
    torch.npu.set_device(rank)  # expect: DEV008
