import torch
from torch.cuda import nvtx

torch.cuda.nvtx.range_push("forward")  # expect: DEV014
out = model(x)
torch.cuda.nvtx.range_pop()  # expect: DEV014
with nvtx.range("backward"):  # expect: DEV014
    pass
nvtx.mark("step")  # expect: DEV014
