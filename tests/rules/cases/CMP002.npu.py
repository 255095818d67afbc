import torch

model = torch.nn.Linear(4, 4)
a = torch.compile(model, backend="npugraphs")  # expect: CMP002
b = torch.compile(model, mode="max-autotune")  # expect: CMP002
