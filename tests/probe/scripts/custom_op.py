import torch
import torch_npu

x = torch.randn(4, device="npu:0")
y = torch_npu.npu_silu(x)  # deprecated and not emulated
