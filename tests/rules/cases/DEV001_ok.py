import torch

x = torch.ones(2).npu()
y = x.to("cpu")
cuda = torch.cuda  # attribute, not a call
ok = torch.cuda.is_available
flag = config.cuda  # an attribute of some object, not a call
