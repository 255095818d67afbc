import torch
from torch import device as Device

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

d0 = torch.device(DEVICE_TYPE)  # expect: DEV003
d1 = torch.device(f"{DEVICE_TYPE}:0")  # expect: DEV003
d2 = torch.device(DEVICE_TYPE, local_rank)  # expect: DEV003
d3 = torch.device(f"{DEVICE_TYPE}:{local_rank}")  # expect: DEV003
d4 = Device(DEVICE_TYPE)  # expect: DEV003
d5 = torch.device(type=DEVICE_TYPE, index=1)  # expect: DEV003
d6 = torch.device(f"{DEVICE_TYPE}:{local_rank}")  # expect: DEV003


def dev():
    return torch.device(DEVICE_TYPE)  # expect: DEV003
