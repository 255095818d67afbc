import torch

if x.device.type != "cpu":  # expect: DEV015
    x = x.contiguous()
assert weight.device.type != "cpu"  # expect: DEV015
pin = batch.device.type == "cpu"  # expect: DEV015
same = (a.device.type != "cpu") == flag  # expect: DEV015
on_gpu = next(model.parameters()).device.type != "cpu"  # expect: DEV015
