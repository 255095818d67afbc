import torch
from torch import amp
from torch.nn.parallel import DistributedDataParallel as DDP

scaler = amp.GradScaler("npu")
apex = "apex"  # a string, not the package
