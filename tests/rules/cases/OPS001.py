import torch
import torch.nn.functional as F
from torch import linalg

a = torch.randn(4, 4)
a_inv = torch.linalg.inv(a)  # expect: OPS001
a_inv2 = linalg.inv(a)  # expect: OPS001
evals, evecs = torch.linalg.eigh(a @ a.T)  # expect: OPS001
chol = torch.linalg.cholesky(a @ a.T + torch.eye(4))  # expect: OPS001
sol = torch.linalg.lstsq(a, torch.randn(4, 2)).solution  # expect: OPS001
ll = torch.lgamma(a.abs() + 1).sum()  # expect: OPS001
dg = a.digamma()  # expect: OPS001
vals, idx = torch.mode(torch.tensor([1, 2, 2]))  # expect: OPS001
m = torch.randint(0, 3, (8,)).mode()  # expect: OPS001
h = torch.hypot(a, a)  # expect: OPS001
loss = F.multi_margin_loss(a, torch.tensor([0, 1, 2, 3]))  # expect: OPS001
s = torch.scatter(a, 0, torch.zeros(1, 4, dtype=torch.long), a[:1], reduce="add")  # expect: OPS001
