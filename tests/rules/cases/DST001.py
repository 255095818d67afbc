import argparse
import os

import torch
import torch.distributed as dist
from torch.distributed import Backend

BACKEND = "nccl"  # expect: DST001

parser = argparse.ArgumentParser()
parser.add_argument("--dist-backend", default="nccl", choices=["nccl", "gloo"])  # expect: DST001
parser.add_argument("--ddp_backend", type=str, default="nccl")  # expect: DST001
args = parser.parse_args()


def setup(rank, world_size):
    dist.init_process_group(backend=args.dist_backend, rank=rank, world_size=world_size)
    torch.distributed.init_process_group("nccl")  # expect: DST001
    dist.init_process_group(
        backend="nccl",  # expect: DST001
        init_method="env://",
    )
    dist.init_process_group(BACKEND)
    dist.init_process_group(Backend.NCCL)  # expect: DST001
    dist.init_process_group(dist.Backend.NCCL)  # expect: DST001
    dist.init_process_group(backend=os.environ.get("BACKEND", 'nccl'))  # expect: DST001
    group = dist.new_group([0, 1], None, "cpu:gloo,cuda:nccl")  # expect: DST001
    return group
mode = "nccl" if args.backend else "gloo"  # expect: DST001
dist.init_process_group(backend=mode)  # one of two values is NCCL: the model follows both
