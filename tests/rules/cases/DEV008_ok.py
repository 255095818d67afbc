import torch

torch.npu.set_device(0)
n = torch.accelerator.device_count()
torch.npu.synchronize()
obj.cuda.synchronize()
x.device_count()
torch.cuda.empty_cache()  # DEV010's
