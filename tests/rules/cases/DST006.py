import torch
import torch.distributed as dist
from torch.distributed import ProcessGroupNCCL  # expect: DST006

opts = dist.ProcessGroupNCCL.Options()  # expect: DST006
opts.is_high_priority_stream = True
torch.cuda.nccl.all_reduce([torch.ones(2)])  # expect: DST006
pg = ProcessGroupNCCL.Options()
