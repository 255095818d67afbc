import torch
import torch.nn as nn

model = nn.Linear(2, 2).cuda()  # expect: DEV001
x = torch.ones(2).cuda(non_blocking=True)  # expect: DEV001
y = (x
     .cuda())  # expect: DEV001
z = x.cuda(0)  # expect: DEV001
r = x.cuda(local_rank, non_blocking=True)  # expect: DEV001
k = x.cuda(device=rank)  # expect: DEV001
w = x.cuda()  # noqa: DEV001
