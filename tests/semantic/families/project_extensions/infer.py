"""A guard in the caller choosing between a helper into the project's CUDA extension and a fallback:
CUDA-only by intent, never rewritten to `x.is_npu` (that would send NPU tensors into the CUDA kernel)."""
import torch
import torch.nn.functional as F

from ops.fused import fused_act  # expect: EXT019 (importing ops.fused runs its load() of .cu sources)


def act(x, bias):
    x = x.cuda()  # expect: DEV001
    if x.is_cuda:  # expect: DEV015
        return fused_act(x, bias)  # expect: DEV026
    return F.leaky_relu(x + bias)
