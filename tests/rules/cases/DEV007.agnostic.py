import torch
import torch as t
from torch import cuda
from torch.cuda import is_available

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

device = torch.device(DEVICE_TYPE)  # expect: DEV007
dev2 = f"{DEVICE_TYPE}:0" if t.accelerator.is_available() else "cpu"  # expect: DEV007
if torch.accelerator.is_available():  # expect: DEV007
    pass
use_gpu = torch.accelerator.is_available() and not args.cpu  # expect: DEV007
assert torch.accelerator.is_available(), "needs a GPU"  # expect: DEV007
