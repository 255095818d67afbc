import torch
from torch.cuda import max_memory_allocated

torch.npu.empty_cache()  # expect: DEV010
used = torch.npu.memory_allocated() / 2**20  # expect: DEV010
peak = torch.npu.max_memory_allocated()  # expect: DEV010
free, total = torch.npu.mem_get_info()  # expect: DEV010
torch.npu.reset_peak_memory_stats()  # expect: DEV010
torch.npu.set_per_process_memory_fraction(0.9)  # expect: DEV010
stats = torch.npu.memory_stats()  # expect: DEV010
