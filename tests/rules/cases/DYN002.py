import torch
import torch.nn as nn


class Sparse(nn.Module):
    def forward(self, x, labels):
        idx = torch.nonzero(x > 0)  # expect: DYN002
        pos = (labels == 1).nonzero(as_tuple=True)  # expect: DYN002
        classes = torch.unique(labels)  # expect: DYN002
        vals = x.masked_select(x > 0)  # expect: DYN002
        rows = torch.where(labels > 0)  # expect: DYN002
        return idx, pos, classes, vals, rows
