import torch
import torch as t

mask = torch.ones(4, 4, device="npu")  # expect: DEV004
noise = t.randn(8, device=f"npu:{rank}")  # expect: DEV004
idx = torch.arange(10, device="npu:0")  # expect: DEV004
g = torch.Generator(device="npu")  # expect: DEV004
buf = x.new_zeros(3, device="npu")  # expect: DEV004
