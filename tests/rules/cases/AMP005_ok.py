import torch

on = torch.is_autocast_enabled("npu")
dt = torch.get_autocast_dtype("npu")
torch.set_autocast_enabled("cpu", False)
cpu_dt = torch.get_autocast_cpu_dtype()
