import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x, labels):
        x = x.masked_fill(x < 0, 0)
        labels = torch.where(labels == 0, torch.full_like(labels, -100), labels)
        x[:, 0] = 1.0
        return x, labels


def collate(labels):
    labels[labels == 0] = -100  # data collation on host tensors, outside forward
    return labels
