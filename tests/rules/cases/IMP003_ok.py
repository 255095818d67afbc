import torch
import torch_npu
from torch_npu.contrib import function  # affinity ops, not the shim
from torch_npu.contrib.module import ChannelShuffle

model = torch.nn.Linear(2, 2).npu()
