"""Factories probed by the tests (``tests.probe.models:NAME``)."""

import torch
import torch.nn as nn


class Planted(nn.Module):
    """A float64 op, a CPU-fallback op, a data-dependent nonzero, batch-dependent shapes."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        acc = h.double().sum()  # LINE_FLOAT64
        inv = torch.linalg.inv(h[:4, :4] + 4 * torch.eye(4))  # LINE_FALLBACK
        idx = torch.nonzero(h > 0)  # LINE_NONZERO
        flat = h.reshape(h.shape[0], -1)  # LINE_BATCH
        return flat.mean() + acc.float() + inv.sum() + idx.float().sum()


def planted():
    return Planted()


def broken():
    raise RuntimeError("weights file missing")


class FailsOnCpu(nn.Module):
    def forward(self, x):
        y = x * 2
        return torch.mm(y, torch.ones(3, 3))  # shape mismatch for (2, 4) input


def fails_on_cpu():
    return FailsOnCpu()


def bert_tiny():
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    return BertModel(cfg)
