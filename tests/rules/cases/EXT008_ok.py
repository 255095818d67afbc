import deepspeed
import torch.distributed as dist

deepspeed.init_distributed()
deepspeed.init_distributed(dist_backend="hccl")
dist.init_process_group("nccl")  # torch.distributed: the DST rules' business
