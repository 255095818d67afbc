import torch
torch.backends.cuda.matmul.allow_tf32 = True  # expect: DEV020
from torch.nn import functional as F

x = torch.ones(2).npu()  # expect: DEV001
y = F.relu(x)
