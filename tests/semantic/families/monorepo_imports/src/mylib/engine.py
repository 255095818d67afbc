import torch


def step():
    torch.cuda.synchronize()  # expect: DEV008
