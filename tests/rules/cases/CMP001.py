import torch

model = torch.nn.Linear(4, 4)
fast = torch.compile(model)  # expect: CMP001
fast2 = torch.compile(model, backend="inductor", dynamic=False)  # expect: CMP001


@torch.compile  # expect: CMP001
def fused_gelu(x):
    return torch.nn.functional.gelu(x)


@torch.compile(fullgraph=True)  # expect: CMP001
def fused_silu(x):
    return torch.nn.functional.silu(x)
