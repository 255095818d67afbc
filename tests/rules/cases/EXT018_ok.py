import torch
from torch.utils.cpp_extension import load

blur_ext = load("blur_ext", sources=["blur.cpp", "blur_kernel.cu"])


def blur(x, k):
    # every device but CUDA takes the reference path: right on Ascend
    if x.device.type != "cuda":
        return torch.nn.functional.conv2d(x, k)
    return blur_ext.blur(x, k)


def scale(x):
    # the non-CPU branch is plain torch: nothing built is reached
    if x.device.type == "cpu":
        return x.float() * 2
    return x.half() * 2


def chosen(dev):
    return "cpu" if dev.type == "cpu" else "accel"
