import torch
import torch.nn as nn

model = nn.Linear(2, 2).npu()  # expect: DEV001
x = torch.ones(2).npu(non_blocking=True)  # expect: DEV001
y = (x
     .npu())  # expect: DEV001
z = x.npu(0)  # expect: DEV001
r = x.npu(local_rank, non_blocking=True)  # expect: DEV001
k = x.npu(device=rank)  # expect: DEV001
w = x.cuda()  # noqa: DEV001
