import torch
import torch.nn as nn

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

model = nn.Linear(2, 2).to(DEVICE_TYPE)  # expect: DEV001
x = torch.ones(2).to(DEVICE_TYPE, non_blocking=True)  # expect: DEV001
y = (x
     .to(DEVICE_TYPE))  # expect: DEV001
z = x.to(f"{DEVICE_TYPE}:0")  # expect: DEV001
r = x.to(f"{DEVICE_TYPE}:{local_rank}", non_blocking=True)  # expect: DEV001
k = x.to(f"{DEVICE_TYPE}:{rank}")  # expect: DEV001
w = x.cuda()  # noqa: DEV001
