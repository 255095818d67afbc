import torch.distributed as dist


def start(rank):
    dist.init_process_group("nccl", rank=rank)  # expect: DST004, DST001
