"""torch.distributed helpers for torchrun launches (one process per GPU)."""

import os

import torch
import torch.distributed as dist


def init_distributed(args):
    """Join the process group when launched by torchrun with more than one process.

    Returns (distributed, rank, world_size).
    """
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    if world_size <= 1:
        return False, 0, 1
    rank = int(os.environ["RANK"])
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url, world_size=world_size, rank=rank)
    dist.barrier()
    return True, rank, world_size


def barrier_tensor():
    """A one-element tensor on this process's GPU, for a cheap all-reduce barrier."""
    local_gpu = int(os.environ.get("LOCAL_RANK", 0)) % max(torch.cuda.device_count(), 1)
    return torch.zeros(1, device=local_gpu)


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def all_reduce_sum(tensor):
    if dist.is_initialized():
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    return tensor


def cleanup():
    if dist.is_initialized():
        dist.destroy_process_group()
