import torch
from torch import cuda

name = torch.npu.get_device_name(0)  # expect: DEV009
props = torch.npu.get_device_properties(0)  # expect: DEV009
major, minor = cuda.get_device_capability()  # expect: DEV009
use_bf16 = torch.npu.is_bf16_supported()  # expect: DEV009
archs = torch.cuda.get_arch_list()  # expect: DEV009
dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"  # expect: DEV009, DEV007
