import torch

q = torch.randn(2, 3, 4)
k = torch.randn(2, 4, 5)
out = torch.matmul(q, k)
bmm = "torch.bmm"  # a string, not a call
