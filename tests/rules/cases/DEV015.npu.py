import torch

if x.is_npu:  # expect: DEV015
    x = x.contiguous()
assert weight.is_npu  # expect: DEV015
pin = not batch.is_npu  # expect: DEV015
same = a.is_npu == flag  # expect: DEV015
on_gpu = next(model.parameters()).is_npu  # expect: DEV015
