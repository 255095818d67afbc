import argparse

import torch
import torch.distributed as dist

from conf.settings import BACKEND, GPU, LOG_EVERY

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"


def setup(use_gpu):
    dist.init_process_group(backend=BACKEND)  # expect: DST004
    x = torch.ones(2).to(GPU)  # expect: DEV006
    return x, LOG_EVERY


def setup2(use_gpu):
    backend = dist.get_default_backend_for_device(DEVICE_TYPE) if use_gpu else "gloo"  # expect: DST001
    dist.init_process_group(backend)  # expect: DST004


def setup3():
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=1)
    args = parser.parse_args()
    args.backend = dist.get_default_backend_for_device(DEVICE_TYPE)  # expect: DST001
    dist.init_process_group(args.backend)  # expect: DST004
