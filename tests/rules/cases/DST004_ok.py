import torch.distributed as dist


def setup(rank, world_size):
    if not dist.is_initialized():
        dist.init_process_group("hccl", rank=rank, world_size=world_size)


def setup2():
    if dist.is_initialized():
        return
    dist.init_process_group("hccl")


def init_process_group():
    return None


init_process_group()
