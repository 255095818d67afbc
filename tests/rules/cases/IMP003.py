import torch
import torch_npu
from torch_npu.contrib import transfer_to_npu  # expect: IMP003
import torch_npu.contrib.transfer_to_npu  # expect: IMP003

model = torch.nn.Linear(2, 2).cuda()
