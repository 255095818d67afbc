import torch
import torch as t

mask = torch.ones(4, 4, device="cuda")  # expect: DEV004
noise = t.randn(8, device=f"cuda:{rank}")  # expect: DEV004
idx = torch.arange(10, device="cuda:0")  # expect: DEV004
g = torch.Generator(device="cuda")  # expect: DEV004
buf = x.new_zeros(3, device="cuda")  # expect: DEV004
