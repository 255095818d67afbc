"""An int device held in variables, on self, returned by a helper and passed as a parameter."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"


def pick_device(local_rank):
    return local_rank % torch.accelerator.device_count()  # expect: DEV008


class Trainer:
    def __init__(self, net):
        self.gpu = int(os.environ["LOCAL_RANK"])
        self.net = net.to(f"{DEVICE_TYPE}:{self.gpu}")  # expect: DEV006

    def batch(self, x):
        return x.to(f"{DEVICE_TYPE}:{self.gpu}", non_blocking=True)  # expect: DEV006


def run(net, dev):
    buf = torch.zeros(4, device=f"{DEVICE_TYPE}:{dev}")  # expect: DEV006
    return DDP(net, device_ids=[f"{DEVICE_TYPE}:{dev}"], output_device=f"{DEVICE_TYPE}:{dev}"), buf  # expect: DEV006, DEV006


def main():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    dev = local_rank % torch.accelerator.device_count()  # expect: DEV008
    net = torch.nn.Linear(4, 4).to(f"{DEVICE_TYPE}:{dev}")  # expect: DEV006
    helper_dev = pick_device(local_rank)
    net.to(f"{DEVICE_TYPE}:{helper_dev}")  # expect: DEV006
    run(net, dev)
    rank = dist.get_rank()
    torch.ones(2).to(f"{DEVICE_TYPE}:{rank}")  # expect: DEV006
    # a tensor's own device and the current accelerator are not ordinals
    torch.ones(2).to(buf_device(net))
    torch.ones(2).to(torch.accelerator.current_device_index())


def buf_device(net):
    return next(net.parameters()).device
