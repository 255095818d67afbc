import torch

if x.device.type == "npu":
    pass
if name == "cudatoolkit":
    pass
same = backend == "nccl"
ok = path.startswith("cuda_kernels/")
ok2 = str(device).startswith("cud")
