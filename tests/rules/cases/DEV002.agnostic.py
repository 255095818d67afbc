import torch

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

x = torch.ones(2)
a = x.to(DEVICE_TYPE)  # expect: DEV002
b = x.to(f"{DEVICE_TYPE}:1", non_blocking=True)  # expect: DEV002
c = x.to(device=f"{DEVICE_TYPE}:{rank}")  # expect: DEV002
model = torch.nn.Linear(2, 2).to_empty(device=DEVICE_TYPE)  # expect: DEV002
d = x.to(DEVICE_TYPE, torch.float16)  # expect: DEV002
e = x.to(f"{DEVICE_TYPE}:{args.gpu}")  # expect: DEV002
