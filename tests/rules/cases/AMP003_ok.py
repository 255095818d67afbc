import torch
from torch.amp import GradScaler

scaler = GradScaler("npu")


def train_step(model, optimizer, loss, lr_scheduler):
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    lr_scheduler.step()
    optimizer.step()


class LossScaler:
    def __init__(self):
        self._scaler = torch.amp.GradScaler("npu")

    def __call__(self, loss, optimizer, parameters, clip_value=None):
        self._scaler.scale(loss).backward()
        if clip_value is not None:
            self._scaler.unscale_(optimizer)
            clip_grads_with_mode(parameters, clip_value)  # the project's own clipping helper
        self._scaler.step(optimizer)
        self._scaler.update()


def clip_grads_with_mode(parameters, value):
    torch.nn.utils.clip_grad_norm_(parameters, value)
