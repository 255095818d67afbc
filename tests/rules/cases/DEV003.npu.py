import torch
from torch import device as Device

d0 = torch.device("npu")  # expect: DEV003
d1 = torch.device("npu:0")  # expect: DEV003
d2 = torch.device("npu", local_rank)  # expect: DEV003
d3 = torch.device(f"npu:{local_rank}")  # expect: DEV003
d4 = Device("npu")  # expect: DEV003
d5 = torch.device(type="npu", index=1)  # expect: DEV003
d6 = torch.device("npu:%d" % local_rank)  # expect: DEV003


def dev():
    return torch.device("npu")  # expect: DEV003
