import numpy as np
import torch
import torch.nn as nn


class Dense(nn.Module):
    def forward(self, x, labels):
        y = torch.where(labels > 0, x, torch.zeros_like(x))
        names = np.unique(np.array(["a", "b"]))
        return y, names


def collate(labels):
    return torch.unique(labels)  # data pipeline, outside forward
