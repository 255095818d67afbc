"""The migrated copy of cuda_train.py (device from argv): prints the losses as float.hex."""
import sys

import torch
import torch.nn as nn

torch.set_num_threads(1)
device = sys.argv[1]
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.LayerNorm(32), nn.Dropout(0.0), nn.Linear(32, 1))
model.to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(1)
data = torch.randn(6, 16, 8, generator=g)
target = torch.randn(6, 16, 1, generator=g)
losses = []
for step in range(6):
    x, y = data[step].to(device), target[step].to(device)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    losses.append(loss.item())
print("LOSSES " + " ".join(float(v).hex() for v in losses))
print("PARAMS " + ",".join(sorted({str(p.device) for p in model.parameters()})))
