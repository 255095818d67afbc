import torch
import torch as t
from torch.cuda import synchronize, set_device

torch.cuda.set_device(local_rank)  # expect: DEV008
n = t.cuda.device_count()  # expect: DEV008
torch.cuda.synchronize()  # expect: DEV008
synchronize()  # expect: DEV008
set_device(0)  # expect: DEV008
with torch.cuda.device(1):  # expect: DEV008
    idx = torch.cuda.current_device()  # expect: DEV008
