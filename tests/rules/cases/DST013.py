import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(model):
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    model = model.to(f"cuda:{local_rank}")
    ddp = DDP(model)  # expect: DST013
    ema = torch.nn.parallel.DistributedDataParallel(model, find_unused_parameters=True)  # expect: DST013
    return ddp, ema
