import torch
import torch.nn as nn


class Head(nn.Module):
    def forward(self, x, lengths):
        n = lengths.max().item()  # expect: DYN001
        ids = lengths.tolist()  # expect: DYN001
        out = torch.zeros(x.size(0), int(lengths.sum().item()))  # expect: DYN001
        return x[:, :n], ids, out
