import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DeviceMesh as DM

mesh = init_device_mesh("cuda", (8,))  # expect: DST012
tp_mesh = init_device_mesh(device_type="cuda", mesh_shape=(2, 4), mesh_dim_names=("dp", "tp"))  # expect: DST012
legacy = torch.distributed.device_mesh.DeviceMesh("cuda", torch.arange(8))  # expect: DST012
alias = DM('cuda', [0, 1])  # expect: DST012


def setup(world_size):
    dist.init_process_group("hccl")
    return dist.init_device_mesh("cuda", (world_size,))  # expect: DST012
