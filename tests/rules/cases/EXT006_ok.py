import functools

import torch


@functools.lru_cache(maxsize=None)
def jit(fn):
    return fn


@jit
def add(x, y):
    return torch.add(x, y)
