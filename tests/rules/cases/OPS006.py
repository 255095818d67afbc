import torch
import torch.nn as nn

idx = torch.tensor([[0, 1], [1, 0]])
s = torch.sparse_coo_tensor(idx, torch.tensor([1.0, 2.0]), (2, 2))  # expect: OPS006
d = torch.randn(3, 3)
sp = d.to_sparse()  # expect: OPS006
p = torch.sparse.mm(s, d[:2, :2])  # expect: OPS006
emb = nn.Embedding(100, 16, sparse=True)  # expect: OPS006
z = torch.zeros(2, 2, layout=torch.sparse_coo)  # expect: OPS006
