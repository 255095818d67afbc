import torch
from torch.cuda import Stream

s = torch.npu.Stream()  # expect: DEV012
s2 = torch.npu.Stream(priority=-1)  # expect: DEV012
with torch.npu.stream(s):  # expect: DEV012
    pass
start = torch.npu.Event(enable_timing=True)  # expect: DEV012
torch.npu.current_stream().wait_stream(s)  # expect: DEV012
