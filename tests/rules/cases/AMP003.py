import torch
from torch.amp import GradScaler

scaler = GradScaler("npu")


def train_step(model, optimizer, loss):
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # expect: AMP003
    scaler.update()


class Trainer:
    def step(self, loss):
        self.scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)  # expect: AMP003
        self.scaler.update()
