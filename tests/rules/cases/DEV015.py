import torch

if x.is_cuda:  # expect: DEV015
    x = x.contiguous()
assert weight.is_cuda  # expect: DEV015
pin = not batch.is_cuda  # expect: DEV015
same = a.is_cuda == flag  # expect: DEV015
on_gpu = next(model.parameters()).is_cuda  # expect: DEV015
