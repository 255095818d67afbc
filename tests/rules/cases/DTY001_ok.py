import numpy as np
import torch

torch.set_default_dtype(torch.float32)
torch.set_default_tensor_type(torch.FloatTensor)
np.set_printoptions(precision=3)
old = torch.get_default_dtype()
if old == torch.float64:
    torch.set_default_dtype(torch.float32)
