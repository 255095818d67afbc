import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DeviceMesh as DM

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

mesh = init_device_mesh(DEVICE_TYPE, (8,))  # expect: DST012
tp_mesh = init_device_mesh(device_type=DEVICE_TYPE, mesh_shape=(2, 4), mesh_dim_names=("dp", "tp"))  # expect: DST012
legacy = torch.distributed.device_mesh.DeviceMesh(DEVICE_TYPE, torch.arange(8))  # expect: DST012
alias = DM(DEVICE_TYPE, [0, 1])  # expect: DST012


def setup(world_size):
    dist.init_process_group("hccl")
    return dist.init_device_mesh(DEVICE_TYPE, (world_size,))  # expect: DST012
