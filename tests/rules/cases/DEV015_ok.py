import torch

if x.is_npu:
    pass
x.is_cuda = True  # an assignment to an attribute of some object
flag = x.is_cpu
