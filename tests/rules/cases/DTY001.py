import torch
from torch import set_default_dtype

torch.set_default_dtype(torch.float64)  # expect: DTY001
set_default_dtype(torch.double)  # expect: DTY001
torch.set_default_tensor_type(torch.DoubleTensor)  # expect: DTY001
torch.set_default_tensor_type("torch.cuda.DoubleTensor")  # expect: DTY001

DTYPE = torch.float64
torch.set_default_dtype(DTYPE)  # expect: DTY001
