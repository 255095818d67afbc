import torch
import torch as t
from torch.cuda import synchronize, set_device

torch.npu.set_device(local_rank)  # expect: DEV008
n = t.npu.device_count()  # expect: DEV008
torch.npu.synchronize()  # expect: DEV008
torch.npu.synchronize()  # expect: DEV008
torch.npu.set_device(0)  # expect: DEV008
with torch.npu.device(1):  # expect: DEV008
    idx = torch.npu.current_device()  # expect: DEV008
