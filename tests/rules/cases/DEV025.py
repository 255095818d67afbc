import torch
import torch as th


def build_optimizer(params, use_fused):
    if torch.version.cuda is not None and use_fused:  # expect: DEV025
        return torch.optim.AdamW(params, fused=True)
    return torch.optim.AdamW(params)


def cuda_major():
    return int(th.version.cuda.split(".")[0])  # expect: DEV025


HAS_CUDA_BUILD = bool(torch.version.cuda)  # expect: DEV025
