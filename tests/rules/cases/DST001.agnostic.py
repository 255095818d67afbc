import argparse
import os

import torch
import torch.distributed as dist
from torch.distributed import Backend

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

BACKEND = dist.get_default_backend_for_device(DEVICE_TYPE)  # expect: DST001

parser = argparse.ArgumentParser()
parser.add_argument("--dist-backend", default=None, choices=["nccl", "gloo"])  # expect: DST001
parser.add_argument("--ddp_backend", type=str, default=None)  # expect: DST001
args = parser.parse_args()


def setup(rank, world_size):
    dist.init_process_group(backend=args.dist_backend, rank=rank, world_size=world_size)
    torch.distributed.init_process_group(dist.get_default_backend_for_device(DEVICE_TYPE))  # expect: DST001
    dist.init_process_group(
        backend=dist.get_default_backend_for_device(DEVICE_TYPE),  # expect: DST001
        init_method="env://",
    )
    dist.init_process_group(BACKEND)
    dist.init_process_group(dist.get_default_backend_for_device(DEVICE_TYPE))  # expect: DST001
    dist.init_process_group(dist.get_default_backend_for_device(DEVICE_TYPE))  # expect: DST001
    dist.init_process_group(backend=os.environ.get("BACKEND", dist.get_default_backend_for_device(DEVICE_TYPE)))  # expect: DST001
    group = dist.new_group([0, 1], None, dist.get_default_backend_for_device(DEVICE_TYPE))  # expect: DST001
    return group
mode = dist.get_default_backend_for_device(DEVICE_TYPE) if args.backend else "gloo"  # expect: DST001
dist.init_process_group(backend=mode)  # one of two values is NCCL: the model follows both
