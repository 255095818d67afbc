import torch
import torch.distributed as dist


def init_distributed_mode(args):
    torch.npu.set_device(args.gpu)  # expect: DEV008
    dist.init_process_group(backend="hccl")  # expect: DST004, DST001


def log(msg):
    print(msg)
