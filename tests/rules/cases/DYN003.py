import torch
import torch.nn as nn
import torch.nn.functional as F


class Loss(nn.Module):
    def forward(self, logits, labels):
        valid = labels != -100
        picked = logits[valid]  # expect: DYN003
        finite = logits[torch.isfinite(logits)]  # expect: DYN003
        both = logits[(labels > 0) & ~valid]  # expect: DYN003
        cols = logits[:, labels.bool()]  # expect: DYN003
        return F.cross_entropy(picked, labels[valid]), finite, both, cols  # expect: DYN003
