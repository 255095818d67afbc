import torch.distributed as dist

if dist.get_backend() == "hccl":
    pass
if dist.get_backend() in ("gloo",):
    pass
ok = dist.is_hccl_available() if hasattr(dist, "is_hccl_available") else False
label = "nccl"  # not a comparison


class Backend:
    NCCL = "x"


print(Backend.NCCL)
