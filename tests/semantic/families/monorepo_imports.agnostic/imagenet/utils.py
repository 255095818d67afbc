import torch
import torch.distributed as dist

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"


def init_distributed_mode(args):
    torch.accelerator.set_device_index(args.gpu)  # expect: DEV008
    dist.init_process_group(backend=dist.get_default_backend_for_device(DEVICE_TYPE))  # expect: DST004, DST001


def log(msg):
    print(msg)
