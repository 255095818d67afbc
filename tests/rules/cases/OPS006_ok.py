import torch
import torch.nn as nn

emb = nn.Embedding(100, 16, sparse=False)
emb2 = nn.Embedding(100, 16)
d = torch.randn(3, 3).to_dense() if False else torch.randn(3, 3)
z = torch.zeros(2, 2, layout=torch.strided)
