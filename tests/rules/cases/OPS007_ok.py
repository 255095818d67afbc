import torch
import torch.nn.functional as F
import torch_npu

x = torch.randn(4)
y = F.silu(x)
r = torch_npu.npu_rotary_mul(x, x, x)
