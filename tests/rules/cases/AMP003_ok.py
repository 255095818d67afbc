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
