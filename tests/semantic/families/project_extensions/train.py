"""Callers of the project's own CUDA code: an extension built by setup.py, one built by load(), a Triton kernel."""
from det.layers.nms import nms
from ops.fused import fused_act, fused_act_safe  # expect: EXT019
from ops.kernels import add


def step(x, bias, boxes, scores):
    keep = nms(boxes, scores, 0.5)  # expect: DEV026
    y = fused_act(x, bias)  # expect: DEV026
    z = fused_act_safe(x, bias)
    return keep, add(y, z)  # expect: DEV026
