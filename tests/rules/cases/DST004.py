import torch.distributed as dist
from torch.distributed import init_process_group


def setup(rank, world_size):
    dist.init_process_group("hccl", rank=rank, world_size=world_size)  # expect: DST004


def retry(n):
    for _ in range(n):
        try:
            init_process_group("hccl")  # expect: DST004
        except RuntimeError:
            continue
