import torch

DEVICE = "cpu"
x = torch.ones(2)
a = x.to("cpu")
b = x.to(DEVICE)
c = x.to(torch.float16)
d = x.to(device)
e = x.to("npu:0")
msg = "move to cuda"
