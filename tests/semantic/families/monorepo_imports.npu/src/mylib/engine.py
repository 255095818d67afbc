import torch


def step():
    torch.npu.synchronize()  # expect: DEV008
