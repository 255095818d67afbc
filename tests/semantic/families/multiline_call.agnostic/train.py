import torch
import torch.nn as nn

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"


class Loss(nn.Module):
    def __init__(self, a, b):
        super().__init__()
        self.a, self.b = a, b


criterion = Loss(
    0.5,
    2,
).to(DEVICE_TYPE)  # expect: DEV001
scale = torch.get_device_module().get_device_properties(  # expect: DEV009
    0,
).total_memory
buf = torch.zeros(
    8,
    device=DEVICE_TYPE,  # expect: DEV004
)
