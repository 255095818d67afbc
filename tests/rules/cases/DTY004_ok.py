import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, cos, sin):
    return q * cos + rotate_half(q) * sin


spec = torch.fft.rfft(torch.randn(16))  # FFT has aclnn kernels
if spec.dtype == torch.complex64:
    power = spec.abs() ** 2
is_c = torch.is_complex(spec)
