"""One DDP step over backend hccl between real processes, plus the collectives."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

rank = int(os.environ["RANK"])
dist.init_process_group("hccl")
torch.npu.set_device(rank)
dev = torch.device("npu", rank)
res = {"backend": dist.get_backend()}
t = torch.full((2,), float(rank + 1), device=dev)
dist.all_reduce(t)
res["all_reduce"] = t.cpu().tolist()
out = torch.empty(4, device=dev)
dist.all_gather_into_tensor(out, torch.full((2,), float(rank), device=dev))
res["all_gather_into_tensor"] = out.cpu().tolist()
lst = [torch.empty(1, device=dev) for _ in range(2)]
dist.all_gather(lst, torch.tensor([rank * 10.0], device=dev))
res["all_gather"] = [v.item() for v in lst]
b = torch.tensor([rank + 5.0], device=dev)
dist.broadcast(b, 0)
res["broadcast"] = b.item()
try:
    dist.all_reduce(torch.ones(2))
    res["cpu_tensor"] = "accepted"
except RuntimeError as e:
    res["cpu_tensor"] = str(e).splitlines()[0]
dist.barrier()
torch.manual_seed(0)
model = nn.Linear(4, 1).to(dev)
ddp = DDP(model, device_ids=[dev])
torch.manual_seed(100 + rank)
ddp(torch.randn(3, 4, device=dev)).sum().backward()
torch.optim.SGD(ddp.parameters(), lr=0.1).step()
ws = [torch.empty_like(model.weight) for _ in range(2)]
dist.all_gather(ws, model.weight.detach())
res["ddp_same"] = torch.equal(ws[0].cpu(), ws[1].cpu())
res["ddp_device"] = str(model.weight.device)
print("DDP", rank, __import__("json").dumps(res))
dist.destroy_process_group()
