import torch
import torch_npu

x = torch.randn(4)
y = torch_npu.npu_silu(x)  # expect: OPS007
z = torch_npu.npu_mish(x)  # expect: OPS007
