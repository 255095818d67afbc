"""no_sync() used the way DDP's documentation shows: the last micro-batch synchronises."""

import contextlib

import torch
import torch.nn.functional as F


def accumulate_if_else(model, loader, optimizer, accum_steps=4):
    for i, (x, y) in enumerate(loader):
        if (i + 1) % accum_steps != 0:
            with model.no_sync():
                F.cross_entropy(model(x), y).backward()
        else:
            F.cross_entropy(model(x), y).backward()  # outside no_sync(): all-reduces
            optimizer.step()
            optimizer.zero_grad()


def accumulate_context_variable(model, loader, optimizer, accum_steps=4):
    for i, (x, y) in enumerate(loader):
        last = (i + 1) % accum_steps == 0
        sync_context = contextlib.nullcontext() if last else model.no_sync()
        with sync_context:
            loss = F.cross_entropy(model(x), y) / accum_steps
            loss.backward()
        if last:
            optimizer.step()
            optimizer.zero_grad()


def accumulate_inline_conditional(model, micro_batches, optimizer):
    for k, (x, y) in enumerate(micro_batches):
        with model.no_sync() if k < len(micro_batches) - 1 else contextlib.nullcontext():
            F.mse_loss(model(x), y).backward()
    optimizer.step()


def accumulate_then_last(ddp, inputs, targets, optimizer):
    """The docstring example of DistributedDataParallel.no_sync()."""
    with ddp.no_sync():
        for inp, tgt in zip(inputs[:-1], targets[:-1]):
            F.mse_loss(ddp(inp), tgt).backward()  # no synchronization, accumulate grads
    F.mse_loss(ddp(inputs[-1]), targets[-1]).backward()  # synchronize grads
    optimizer.step()


def accumulate_early_continue(model, loader, optimizer, accum_steps):
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y) / accum_steps
        if (i + 1) % accum_steps:
            with model.no_sync():
                loss.backward()
            continue
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def validate(model, loader):
    """no_sync() around an evaluation forward: no backward, nothing to synchronise."""
    with torch.no_grad():
        for x, y in loader:
            with model.no_sync():
                F.cross_entropy(model(x), y)


def micro_step(model, x, y):
    """Called for all but the last micro-batch by a caller not shown here; no optimizer step here."""
    with model.no_sync():
        F.cross_entropy(model(x), y).backward()


def step_with_helper(model, loader, optimizer):
    """The backward runs in a nested helper: not visible as a backward under no_sync()."""

    def _backward(loss):
        loss.backward()

    for x, y in loader:
        with model.no_sync():
            _backward(F.cross_entropy(model(x), y))
        optimizer.step()

