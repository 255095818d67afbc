import torch

x = torch.randn(4)
q = torch.quantize_per_tensor(x, 0.1, 0, torch.quint8)  # expect: DTY006
w = torch.quantize_per_channel(x, torch.ones(1), torch.zeros(1, dtype=torch.long), 0, dtype=torch.qint8)  # expect: DTY006
ids = torch.zeros(4, dtype=torch.uint64)  # expect: DTY006
