import torch

name = torch.npu.get_device_name(0)
cap = torch.accelerator.get_device_capability()
props = device.get_device_properties()
