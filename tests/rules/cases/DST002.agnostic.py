import torch
import torch.distributed as dist
from torch.distributed import Backend

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"


def setup(rank):
    if dist.get_backend() == "nccl":  # expect: DST002
        torch.cuda.set_device(rank)
    if "NCCL" != dist.get_backend():  # expect: DST002
        pass
    if dist.get_backend() == Backend.NCCL:  # expect: DST002
        pass
    fast = dist.is_nccl_available()  # expect: DST002
    name = dist.Backend.NCCL  # expect: DST002
    dist.init_process_group(backend=Backend.NCCL)  # DST001, not DST002
    dist.init_process_group(backend=dist.get_default_backend_for_device(DEVICE_TYPE))  # expect: DST002
    return fast, name
