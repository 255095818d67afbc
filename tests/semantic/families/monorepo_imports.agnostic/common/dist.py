import torch


def setup(rank):
    torch.accelerator.set_device_index(rank)  # expect: DEV008
