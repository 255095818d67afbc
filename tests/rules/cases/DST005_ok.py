import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(nn.Linear(2, 2))
if isinstance(model, nn.DataParallel):
    model = model.module


class DataParallel:
    pass


DataParallel()
