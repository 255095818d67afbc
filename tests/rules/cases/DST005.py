import torch
import torch.nn as nn
from torch.nn import DataParallel
from torch.nn.parallel import data_parallel

model = nn.DataParallel(nn.Linear(2, 2))  # expect: DST005
model = torch.nn.DataParallel(model, device_ids=[0, 1])  # expect: DST005
model = DataParallel(model)  # expect: DST005
out = data_parallel(model, torch.ones(2))  # expect: DST005
