import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x, labels):
        x[x < 0] = 0  # expect: DYN004
        pad = labels == 0
        labels[pad] = -100  # expect: DYN004
        x[torch.isnan(x)] += 1.0  # expect: DYN004
        return x, labels
