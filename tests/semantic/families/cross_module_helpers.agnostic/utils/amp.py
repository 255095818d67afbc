import torch

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"


class LossScaler:
    """Wraps CUDA's GradScaler."""

    def __init__(self):
        self.scaler = torch.amp.GradScaler(DEVICE_TYPE, enabled=DEVICE_TYPE != "cpu")  # expect: AMP001

    def step(self, loss, opt):
        self.scaler.scale(loss).backward()
        self.scaler.step(opt)  # expect: AMP003
        self.scaler.update()


def evaluate(model, batch):
    with torch.amp.autocast(DEVICE_TYPE, enabled=DEVICE_TYPE != "cpu"):  # expect: AMP001
        return model(batch)
