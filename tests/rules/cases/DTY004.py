import torch


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2).float() / dim))
    t = torch.arange(end)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)  # expect: DTY004


def apply_rotary(xq, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))  # expect: DTY004
    return torch.view_as_real(xq_ * freqs_cis).flatten(3)


buf = torch.zeros(4, dtype=torch.complex64)  # expect: DTY004
half = buf.chalf()  # expect: DTY004
