import torch


def step():
    torch.accelerator.synchronize()  # expect: DEV008
