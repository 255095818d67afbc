import torch
import torch_npu  # noqa: F401  (import order does not matter: torch_npu imports torch itself)


def step(model, x):
    x = x.npu()
    torch.npu.synchronize()
    return model(x.to("npu:0"))


NAME = "npu"  # a string that is not used as a device
print("running on", NAME)