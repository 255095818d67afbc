import torch
import torch_npu
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return torch_npu.npu_rms_norm(x, self.weight, epsilon=1e-6)[0]  # expect: IMP001


def make_optimizer(model):
    return torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=1e-4)
