import torch
from torch.backends import cudnn

torch.npu.matmul.allow_hf32 = True  # expect: DEV020
torch.npu.conv.allow_hf32 = False  # expect: DEV020
torch.npu.conv.allow_hf32 = True  # expect: DEV020
