import torch
import torch_npu  # noqa: F401

model = torch.nn.Linear(4, 4)
a = torch.compile(model, backend="npugraph_ex")
b = torch.compile(model, backend="npugraphs")
c = torch.compile(model, backend="npu")
d = torch.compile(model, backend=lambda gm, inputs: gm)
re_pattern = __import__("re").compile("x+")


@torch.compile(backend="npugraph_ex")
def fused_gelu(x):
    return torch.nn.functional.gelu(x)
