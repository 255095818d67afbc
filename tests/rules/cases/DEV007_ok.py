import torch

if torch.npu.is_available():
    pass
ok = torch.accelerator.is_available()
avail = something.cuda.is_available()
fn = torch.cuda.is_available  # a reference, not a test
