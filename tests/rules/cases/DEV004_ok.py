import torch
from torch.utils.data import DataLoader

mask = torch.ones(4, 4, device="cpu")
x = torch.ones(2).to(device="cuda")  # DEV002's
d = torch.device(type="cuda")  # DEV003's
with torch.autocast(device_type="cuda"):  # AMP's
    pass
scaler = torch.amp.GradScaler(device="cuda")  # AMP's
loader = DataLoader(ds, pin_memory=True, pin_memory_device="cuda")  # MEM's
mesh = torch.distributed.device_mesh.init_device_mesh("cuda", (2,))  # DST's
y = torch.zeros(2, device=DEVICE)
