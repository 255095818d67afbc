import torch
import torch as t
from torch import cuda
from torch.cuda import is_available

device = torch.device("npu" if torch.npu.is_available() else "cpu")  # expect: DEV007
dev2 = "npu:0" if t.npu.is_available() else "cpu"  # expect: DEV007
if torch.npu.is_available():  # expect: DEV007
    pass
use_gpu = torch.npu.is_available() and not args.cpu  # expect: DEV007
assert torch.npu.is_available(), "needs a GPU"  # expect: DEV007
