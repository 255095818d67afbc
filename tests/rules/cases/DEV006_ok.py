import torch

x = torch.ones(2).to("npu:0")
y = x.to(torch.float16)
z = x.to(device)
w = x.to(x)
n = torch.zeros(8, device=dev)
d = torch.device("npu", 0)
b = x.to(True)
c = x.cuda(0)  # DEV001's
count = x.to(num_layers)
