import torch
import torch as t

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

mask = torch.ones(4, 4, device=DEVICE_TYPE)  # expect: DEV004
noise = t.randn(8, device=f"{DEVICE_TYPE}:{rank}")  # expect: DEV004
idx = torch.arange(10, device=f"{DEVICE_TYPE}:0")  # expect: DEV004
g = torch.Generator(device=DEVICE_TYPE)  # expect: DEV004
buf = x.new_zeros(3, device=DEVICE_TYPE)  # expect: DEV004
