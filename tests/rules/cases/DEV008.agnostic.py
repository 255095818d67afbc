import torch
import torch as t
from torch.cuda import synchronize, set_device

torch.accelerator.set_device_index(local_rank)  # expect: DEV008
n = t.accelerator.device_count()  # expect: DEV008
torch.accelerator.synchronize()  # expect: DEV008
torch.accelerator.synchronize()  # expect: DEV008
torch.accelerator.set_device_index(0)  # expect: DEV008
with torch.accelerator.device_index(1):  # expect: DEV008
    idx = torch.accelerator.current_device_index()  # expect: DEV008
