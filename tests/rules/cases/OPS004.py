import torch

q = torch.randn(2, 3, 4)
k = torch.randn(2, 4, 5)
out = torch.bmm(q, k)  # expect: OPS004
out2 = q.bmm(k)  # expect: OPS004
