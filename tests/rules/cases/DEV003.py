import torch
from torch import device as Device

d0 = torch.device("cuda")  # expect: DEV003
d1 = torch.device("cuda:0")  # expect: DEV003
d2 = torch.device("cuda", local_rank)  # expect: DEV003
d3 = torch.device(f"cuda:{local_rank}")  # expect: DEV003
d4 = Device("cuda")  # expect: DEV003
d5 = torch.device(type="cuda", index=1)  # expect: DEV003
d6 = torch.device("cuda:%d" % local_rank)  # expect: DEV003


def dev():
    return torch.device(f"cuda")  # expect: DEV003
