import numpy as np
import torch

a = torch.zeros(4, dtype=torch.float32)
b = torch.zeros(4, dtype=torch.float64, device="cpu")  # explicitly on the host
c = np.zeros(4, dtype=np.float64)
d = torch.ones(2).to(dtype=torch.float64)  # a cast: DTY003, not DTY002
e = torch.tensor([1.0], dtype=torch.bfloat16)
stats = torch.tensor([0.5]).cpu().new_zeros(3, dtype=torch.float64)
