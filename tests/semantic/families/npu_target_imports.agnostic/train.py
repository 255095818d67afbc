import torch

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"
torch.backends.cuda.matmul.allow_tf32 = True  # expect: DEV020
from torch.nn import functional as F

x = torch.ones(2).to(DEVICE_TYPE)  # expect: DEV001
y = F.relu(x)
