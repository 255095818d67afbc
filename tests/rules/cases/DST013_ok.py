import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(model):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)  # the process's device is set
    dist.init_process_group("nccl")
    model = model.to(f"cuda:{local_rank}")
    ddp = DDP(model)
    pinned = DDP(model, device_ids=[local_rank])
    return ddp, pinned
