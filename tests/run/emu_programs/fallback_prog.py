"""Runs one op the KB classes as a CPU fallback (linalg.inv) from a user function."""
import torch


def invert(a):
    return torch.linalg.inv(a)  # THE FALLBACK LINE


x = torch.eye(3, device="npu") * 2
for _ in range(3):
    y = invert(x)
print("RESULT", y.cpu().diagonal().tolist(), y.device)
