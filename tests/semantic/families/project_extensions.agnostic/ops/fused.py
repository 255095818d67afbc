import os

import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function
from torch.utils.cpp_extension import load

module_path = os.path.dirname(__file__)
fused = load(  # expect: EXT001, OPS003
    "fused",
    sources=[os.path.join(module_path, "fused_bias_act.cpp"), os.path.join(module_path, "fused_bias_act_kernel.cu")],
)


def fused_act(x, bias):
    return fused.fused_bias_act(x, bias)


def fused_act_safe(x, bias):
    if x.is_cuda:  # expect: DEV015
        return fused.fused_bias_act(x, bias)
    return F.leaky_relu(x + bias)


class FusedFn(Function):
    @staticmethod
    def forward(ctx, x, bias):
        return fused.fused_bias_act(x, bias)


def fused_fn(x, bias):
    return FusedFn.apply(x, bias)


class FusedLeakyReLU(nn.Module):
    def forward(self, x, bias):
        return fused.fused_bias_act(x, bias)
