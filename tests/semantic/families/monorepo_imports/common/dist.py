import torch


def setup(rank):
    torch.cuda.set_device(rank)  # expect: DEV008
