import torch
from torch.distributed.device_mesh import init_device_mesh
from mylib.mesh import DeviceMesh  # another library's DeviceMesh

mesh = init_device_mesh("npu", (8,))
cpu_mesh = init_device_mesh("cpu", (2,))
other = DeviceMesh("cuda", [0, 1])  # not torch's
print("cuda")  # a string, not a mesh


def build(init_device_mesh, shape):
    return init_device_mesh("cuda", shape)  # the parameter shadows the import


def typed(device_type, shape):
    return init_device_mesh(device_type, shape)  # a name: DEV024 reports a "cuda" literal where it is written
