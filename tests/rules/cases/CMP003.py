import torch


@torch.jit.script  # expect: CMP003
def gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / 1.41421))


model = torch.nn.Linear(4, 4)
scripted = torch.jit.script(model)  # expect: CMP003
traced = torch.jit.trace(model, torch.randn(1, 4))  # expect: CMP003
