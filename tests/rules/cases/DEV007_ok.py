import torch

if torch.npu.is_available():
    pass
ok = torch.accelerator.is_available()
avail = something.cuda.is_available()
fn = torch.cuda.is_available  # a reference, not a test


class Loader:
    def __init__(self, device):
        self.is_cuda = device.type == "cuda" and torch.cuda.is_available()
        self.is_npu = device.type == "npu" and torch.npu.is_available()
