import torch
from torch.amp import autocast, GradScaler
import torch.cuda.amp  # the module itself; its uses are checked where they are written

scaler = GradScaler("npu")
with autocast("npu"):
    pass
with torch.npu.amp.autocast():
    pass


class Model:
    def autocast(self):
        return None


Model().autocast()
