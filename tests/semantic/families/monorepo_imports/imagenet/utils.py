import torch
import torch.distributed as dist


def init_distributed_mode(args):
    torch.cuda.set_device(args.gpu)  # expect: DEV008
    dist.init_process_group(backend="nccl")  # expect: DST004, DST001


def log(msg):
    print(msg)
