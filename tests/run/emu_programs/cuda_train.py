"""A CUDA training script as written for a GPU: it must fail where an Ascend host fails (model.to)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
device = "cuda"
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
model.to(device)  # FAILS HERE on an NPU host
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(4, 8, device=device)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
