"""Small models whose step memory is computed by hand in the tests (own code, no fixtures copied)."""

from __future__ import annotations

import torch
import torch.nn as nn

I, H, O = 8, 16, 4


def mlp():
    """Linear(8, 16) -> ReLU -> Linear(16, 4)."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(I, H), nn.ReLU(), nn.Linear(H, O))


class Block(nn.Module):
    """Linear(H, H) -> ReLU -> Linear(H, H) -> ReLU: saves two B*H activations of its own."""

    def __init__(self, din=H):
        super().__init__()
        self.a = nn.Linear(din, H)
        self.b = nn.Linear(H, H)

    def forward(self, x):
        return torch.relu(self.b(torch.relu(self.a(x))))


def blocks():
    """Block(8->16), Block(16->16), head Linear(16->4), named 0, 1, 2."""
    return nn.Sequential(Block(I), Block(H), nn.Linear(H, O))


D, T, V, FF = 16, 6, 32, 32


class TinyTransformer(nn.Module):
    """Embedding(V=32, D=16) -> one pre-LN-free single-head attention block with its own
    softmax -> MLP (Linear D->FF, ReLU, Linear FF->D) -> head Linear(D, V); no dropout.

    Written with plain ops so what autograd saves is known:
    q, k, v = x Wq, x Wk, x Wv (x saved once: it is the embedding output); s = q k^T / 4
    (q and k saved by bmm); p = softmax(s) (p saved by softmax and by the p@v bmm, one
    storage); a = p v (v saved); y = x + a Wo (a saved); h = relu(y W1) (y saved, h saved);
    z = y + h W2 (h saved, same storage); logits = z Wh (z saved).
    """

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.q = nn.Linear(D, D, bias=False)
        self.k = nn.Linear(D, D, bias=False)
        self.v = nn.Linear(D, D, bias=False)
        self.o = nn.Linear(D, D, bias=False)
        self.fc1 = nn.Linear(D, FF, bias=False)
        self.fc2 = nn.Linear(FF, D, bias=False)
        self.head = nn.Linear(D, V, bias=False)

    def forward(self, idx):
        x = self.emb(idx)
        q, k, v = self.q(x), self.k(x), self.v(x)
        s = torch.matmul(q, k.transpose(1, 2)) * 0.25
        p = torch.softmax(s, dim=-1)
        a = torch.matmul(p, v)
        y = x + self.o(a)
        h = torch.relu(self.fc1(y))
        z = y + self.fc2(h)
        return self.head(z)


def tiny_transformer():
    torch.manual_seed(0)
    return TinyTransformer()


def wide_mlp():
    """Activations dominate at batch >= ~40: Linear(64, 512) -> ReLU -> Linear(512, 512) -> ReLU -> Linear(512, 8)."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 8))


def no_grad_output():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 4)

        def forward(self, x):
            return self.l(x).argmax(-1)
    return M()


def broken():
    raise RuntimeError("cannot build")


def reads_data():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 4)

        def forward(self, x):
            n = int(self.l(x).sum().item() > 0)
            return self.l(x)[: n + 1]
    return M()


def reads_while_building():
    """Reads a tensor value in the factory: fails on fake and meta tensors, so it is built on the CPU."""
    m = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    m.scale = float(m[0].weight.abs().max().item())
    return m
