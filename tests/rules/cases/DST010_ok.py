"""A distributed training module whose optimizer steps cannot be shown to be unsynchronised.

The process group is set up here, but each training loop's model or gradients come from code this
file does not show (the caller may wrap the model in DDP), or the loop is not a training step.
"""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F

from .builders import build_from_config, forward_backward


def setup():
    dist.init_process_group(backend="nccl", init_method="env://")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))


def train_one_epoch(model, optimizer, loader, device):
    """Library entry point: the training script builds (and wraps) the model and calls this."""
    model.train()
    for images, targets in loader:
        images, targets = images.to(device), targets.to(device)
        loss = F.cross_entropy(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_from_config(cfg, loader):
    model, optimizer = build_from_config(cfg)  # built and possibly wrapped elsewhere
    for batch in loader:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def train_with_helper(model_cfg, loader):
    model = torch.nn.Linear(8, 2).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
    for batch in loader:
        forward_backward(model, batch)  # the backward (and any all-reduce) is in the helper
        optimizer.step()
        scheduler.step()


def fit_lbfgs(x, y):
    model = torch.nn.Linear(x.size(1), 1)
    optimizer = torch.optim.LBFGS(model.parameters(), lr=1.0)

    def closure():
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss

    optimizer.step(closure)  # one full-batch solve, not a training loop


def evaluate(model, loader, scheduler):
    model.eval()
    total = torch.zeros(2, device="cuda")
    with torch.no_grad():
        for images, targets in loader:
            total[0] += (model(images).argmax(1) == targets).sum()
            total[1] += targets.numel()
    dist.all_reduce(total)
    scheduler.step(total[0] / total[1])
    return (total[0] / total[1]).item()
