import torch

s = torch.npu.Stream()
e = torch.Event()
with torch.npu.stream(s):
    pass
stream = open("x")
