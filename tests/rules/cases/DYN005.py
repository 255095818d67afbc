import torch
import torch.nn as nn


class Gate(nn.Module):
    def forward(self, x, mask):
        if x.abs().max() > 1e4:  # expect: DYN005
            x = x.clamp(-1e4, 1e4)
        if torch.any(mask):  # expect: DYN005
            x = x * mask
        while (x != 0).all():  # expect: DYN005
            x = x - 1
        return x
