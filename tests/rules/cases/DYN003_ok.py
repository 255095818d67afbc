import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x, idx, mask):
        a = x[0]
        b = x[:, 1:3]
        c = x[idx]  # integer index tensor: fixed shape
        d = x * mask  # mask multiply keeps the shape
        e = x[..., None]
        return a, b, c, d, e


def filter_batch(x):
    return x[x > 0]  # outside forward (data preparation)
