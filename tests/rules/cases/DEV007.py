import torch
import torch as t
from torch import cuda
from torch.cuda import is_available

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # expect: DEV007
dev2 = "cuda:0" if t.cuda.is_available() else "cpu"  # expect: DEV007
if cuda.is_available():  # expect: DEV007
    pass
use_gpu = is_available() and not args.cpu  # expect: DEV007
assert torch.cuda.is_available(), "needs a GPU"  # expect: DEV007
