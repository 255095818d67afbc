"""Gradient accumulation under DDP / FSDP whose last micro-batch also runs inside no_sync().

Every backward here is inside `no_sync()`, so the all-reduce it postpones never comes: each rank
steps with its own accumulated gradients.
"""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def train_epoch(model, loader, optimizer, accum_steps=4):
    """The common shape: no_sync() around every micro-batch, step every accum_steps batches."""
    model.train()
    for i, (x, y) in enumerate(loader):
        with model.no_sync():  # expect: DST011
            loss = F.cross_entropy(model(x), y) / accum_steps
            loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)


def train_step_micro_batches(ddp_model, batch, optimizer, n_micro=8):
    """A batch split into micro-batches, all of them inside no_sync()."""
    xs, ys = batch
    optimizer.zero_grad()
    for mx, my in zip(xs.chunk(n_micro), ys.chunk(n_micro)):
        with ddp_model.no_sync():  # expect: DST011
            (F.mse_loss(ddp_model(mx), my) / n_micro).backward()
    optimizer.step()


def train_amp(model, loader, optimizer, scaler, accum_steps):
    for step, batch in enumerate(loader):
        with model.no_sync(), torch.autocast("cuda", dtype=torch.float16):  # expect: DST011
            loss = model(**batch).loss / accum_steps
            scaler.scale(loss).backward()
        if (step + 1) % accum_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()


class FSDPTrainer:
    def __init__(self, model, optimizer, accum):
        self.model = model
        self.optimizer = optimizer
        self.accum = accum

    def fit(self, loader):
        for i, (tokens, labels) in enumerate(loader):
            with self.model.no_sync():  # expect: DST011
                logits = self.model(tokens)
                loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten()) / self.accum
                loss.backward()
            if (i + 1) % self.accum == 0:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                self.optimizer.step()
                self.optimizer.zero_grad()


def main(rank, loader):
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(16, 4).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    train_epoch(model, loader, optimizer)
