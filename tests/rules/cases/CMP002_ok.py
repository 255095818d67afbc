import torch

model = torch.nn.Linear(4, 4)
a = torch.compile(model, backend="npugraphs")
b = torch.compile(model, mode="reduce-overhead")
c = torch.compile(model, options={"triton.cudagraphs": True})
