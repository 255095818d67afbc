import torch
import torch.nn as nn


class Loss(nn.Module):
    def __init__(self, a, b):
        super().__init__()
        self.a, self.b = a, b


criterion = Loss(
    0.5,
    2,
).npu()  # expect: DEV001
scale = torch.npu.get_device_properties(  # expect: DEV009
    0,
).total_memory
buf = torch.zeros(
    8,
    device="npu",  # expect: DEV004
)
