"""Saving and restoring training state."""

import os

import torch


def unwrap(model):
    model = getattr(model, "_orig_mod", model)  # torch.compile wrapper
    return getattr(model, "module", model)  # DistributedDataParallel wrapper


def save_checkpoint(path, model, optimizer, scaler, step, args):
    state = {
        "model": unwrap(model).state_dict(),
        "optimizer": optimizer.state_dict(),
        "scaler": scaler.state_dict(),
        "step": step,
        "args": vars(args),
    }
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


def load_checkpoint(path, model, optimizer=None, scaler=None):
    """Restore what is in ``path``; returns the step to continue from."""
    ckpt = torch.load(path)
    unwrap(model).load_state_dict(ckpt["model"])
    if optimizer is not None and "optimizer" in ckpt:
        optimizer.load_state_dict(ckpt["optimizer"])
    if scaler is not None and "scaler" in ckpt:
        scaler.load_state_dict(ckpt["scaler"])
    return ckpt.get("step", 0)
