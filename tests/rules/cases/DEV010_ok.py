import torch

torch.npu.empty_cache()
used = torch.npu.memory_allocated()
cache.empty_cache()
torch.cuda.synchronize()  # DEV008's
