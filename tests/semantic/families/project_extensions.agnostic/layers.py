"""An autograd Function's apply runs its forward; calling an nn.Module instance runs its forward."""
from ops.fused import FusedLeakyReLU, fused_fn  # expect: EXT019


def block(x, bias):
    act = FusedLeakyReLU()
    y = fused_fn(x, bias)  # expect: DEV026
    return act(y, bias)  # expect: DEV026
