import torch
from torch.cuda import max_memory_allocated

torch.cuda.empty_cache()  # expect: DEV010
used = torch.cuda.memory_allocated() / 2**20  # expect: DEV010
peak = max_memory_allocated()  # expect: DEV010
free, total = torch.accelerator.get_memory_info()  # expect: DEV010
torch.accelerator.reset_peak_memory_stats()  # expect: DEV010
torch.cuda.set_per_process_memory_fraction(0.9)  # expect: DEV010
stats = torch.cuda.memory_stats()  # expect: DEV010
