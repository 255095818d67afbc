import logging

import torch

print("torch", torch.__version__, "built with CUDA", torch.version.cuda)
logging.info("cuda build: %s", torch.version.cuda)
version = torch.version.git_version


class Config:
    def __init__(self):
        self.version = type("V", (), {"cuda": "12.1"})()

    def cuda_release(self):
        return self.version.cuda


def sync(device):
    if device.type == "cuda" and torch.version.cuda:
        torch.cuda.synchronize()
    elif device.type == "npu":
        torch.npu.synchronize()
