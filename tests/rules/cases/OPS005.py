import torch
import torch.nn as nn
import torch.nn.functional as F

norm = nn.InstanceNorm2d(64, affine=True)  # expect: OPS005
y = F.instance_norm(torch.randn(2, 3, 8, 8))  # expect: OPS005
