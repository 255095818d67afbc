import torch
from torch.cuda import Stream

s = torch.get_device_module().Stream()  # expect: DEV012
s2 = torch.get_device_module().Stream(priority=-1)  # expect: DEV012
with torch.get_device_module().stream(s):  # expect: DEV012
    pass
start = torch.get_device_module().Event(enable_timing=True)  # expect: DEV012
torch.accelerator.current_stream().wait_stream(s)  # expect: DEV012
