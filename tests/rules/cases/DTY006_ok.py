import torch

ids = torch.zeros(4, dtype=torch.int64)
small = torch.zeros(4, dtype=torch.uint8)
if ids.dtype == torch.qint8:
    ids = ids.int_repr()
