import torch.distributed as dist

opts = None
dist.init_process_group("hccl", pg_options=opts)
nccl = "library name"
print(nccl)
