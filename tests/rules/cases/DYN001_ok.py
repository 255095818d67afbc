import torch
import torch.nn as nn


class Head(nn.Module):
    def forward(self, x):
        return x.mean(dim=1)


def train_step(model, x, y, opt):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()  # outside forward: once per step, expected


def forward(x):  # a plain function, not a module's forward
    return x.sum().item()


stats = {"a": 1}
keys = list(stats.items())
