import argparse

import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--dist-backend", default="hccl")
parser.add_argument("--log-backend", default="tensorboard")
args = parser.parse_args()

dist.init_process_group(backend=args.dist_backend)
dist.init_process_group("gloo")
dist.init_process_group()
dist.new_group([0, 1])
dist.new_group([0, 1], backend="cpu:gloo,npu:hccl")
print("nccl")


def init_process_group(backend):  # a local function of the same name
    return backend


init_process_group("nccl")
