import torch

x = x.type(torch.FloatTensor)
y = x.to(torch.float32)
z = torch.npu.FloatTensor(2)
t = x.type()
