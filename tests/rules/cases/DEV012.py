import torch
from torch.cuda import Stream

s = torch.cuda.Stream()  # expect: DEV012
s2 = Stream(priority=-1)  # expect: DEV012
with torch.cuda.stream(s):  # expect: DEV012
    pass
start = torch.cuda.Event(enable_timing=True)  # expect: DEV012
torch.cuda.current_stream().wait_stream(s)  # expect: DEV012
