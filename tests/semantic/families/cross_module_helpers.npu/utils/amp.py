import torch


class LossScaler:
    """Wraps CUDA's GradScaler."""

    def __init__(self):
        self.scaler = torch.npu.amp.GradScaler()  # expect: AMP001

    def step(self, loss, opt):
        self.scaler.scale(loss).backward()
        self.scaler.step(opt)  # expect: AMP003
        self.scaler.update()


def evaluate(model, batch):
    with torch.npu.amp.autocast():  # expect: AMP001
        return model(batch)
