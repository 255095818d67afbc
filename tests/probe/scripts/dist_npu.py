import torch
import torch.distributed as dist
import torch_npu  # noqa: F401

dist.init_process_group(backend="hccl")
t = torch.ones(3, device="npu")
dist.all_reduce(t)
assert dist.get_backend() == "gloo"
x = torch.linalg.inv(torch.eye(3, device="npu") * 2)  # LINE_INV
print("world", dist.get_world_size(), float(t.sum()), float(x.sum()))
dist.destroy_process_group()
