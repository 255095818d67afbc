import torch
import torch as t
from torch import cuda
from torch.cuda import is_available

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

device = torch.device(DEVICE_TYPE)  # expect: DEV007
dev2 = f"{DEVICE_TYPE}:0" if DEVICE_TYPE != "cpu" else "cpu"  # expect: DEV007
if DEVICE_TYPE != "cpu":  # expect: DEV007
    pass
use_gpu = DEVICE_TYPE != "cpu" and not args.cpu  # expect: DEV007
assert DEVICE_TYPE != "cpu", "needs a GPU"  # expect: DEV007
