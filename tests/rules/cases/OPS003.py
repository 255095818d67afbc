import torch

a = torch.randn(4, 4)
ld, piv = torch.linalg.ldl_factor(a @ a.T)  # expect: OPS003
c = torch.sparse_csr_tensor(torch.tensor([0, 1]), torch.tensor([0]), torch.tensor([1.0]))  # expect: OPS003
