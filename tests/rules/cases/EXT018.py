import torch
from torch.autograd import Function
from torch.utils.cpp_extension import load

blur_ext = load("blur_ext", sources=["blur.cpp", "blur_kernel.cu"])


class BlurFn(Function):
    @staticmethod
    def forward(ctx, x, k):
        return blur_ext.blur(x, k)


def blur(x, k):
    if x.device.type == "cpu":  # expect: EXT018
        return torch.nn.functional.conv2d(x, k)
    else:
        return BlurFn.apply(x, k)


def blur_direct(x, k):
    if "cpu" == x.device.type:  # expect: EXT018
        return torch.nn.functional.conv2d(x, k)
    return blur_ext.blur(x, k)


def blur_flipped(x, k):
    if str(x.device) != "cpu":  # expect: EXT018
        return blur_ext.blur(x, k)
    return torch.nn.functional.conv2d(x, k)
