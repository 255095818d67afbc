import torch.nn as nn
import torch.nn.functional as F

norm = nn.GroupNorm(64, 64)
bn = nn.BatchNorm2d(64)
ln = F.layer_norm
