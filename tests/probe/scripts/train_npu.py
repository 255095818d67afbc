import argparse

import torch
import torch.nn as nn
import torch_npu  # noqa: F401
from torch_npu.contrib import transfer_to_npu  # noqa: F401

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=100)
args = p.parse_args()

device = torch.device("npu:0" if torch.npu.is_available() else "cpu")
torch.npu.set_device(device)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.npu.amp.GradScaler()
for epoch in range(args.epochs):
    x = torch.randn(8, 16, device=device)
    y = torch.randint(0, 4, (8,)).npu()
    with torch.npu.amp.autocast():
        loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    torch.npu.synchronize()
    print("step", epoch, float(loss))
