import torch
from torch import cuda

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

name = torch.get_device_module().get_device_name(0)  # expect: DEV009
props = torch.get_device_module().get_device_properties(0)  # expect: DEV009
major, minor = cuda.get_device_capability()  # expect: DEV009
use_bf16 = (DEVICE_TYPE != "cpu" and torch.get_device_module(DEVICE_TYPE).is_bf16_supported())  # expect: DEV009
archs = torch.cuda.get_arch_list()  # expect: DEV009
dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"  # expect: DEV009, DEV007
