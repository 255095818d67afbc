import torch
import torch.distributed as dist
from torch.distributed import Backend


def setup(rank):
    if dist.get_backend() == "hccl":  # expect: DST002
        torch.cuda.set_device(rank)
    if "HCCL" != dist.get_backend():  # expect: DST002
        pass
    if dist.get_backend() == "hccl":  # expect: DST002
        pass
    fast = dist.is_nccl_available()  # expect: DST002
    name = dist.Backend.NCCL  # expect: DST002
    dist.init_process_group(backend=Backend.NCCL)  # DST001, not DST002
    dist.init_process_group(backend="hccl")  # expect: DST002
    return fast, name
