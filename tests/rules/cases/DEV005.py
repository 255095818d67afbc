import torch

a = torch.load("ckpt.pt", map_location="cuda")  # expect: DEV005
b = torch.load("ckpt.pt", map_location="cuda:0", weights_only=True)  # expect: DEV005
c = torch.load("ckpt.pt", map_location={"cuda:0": "cuda:1"})  # expect: DEV005
d = torch.load("ckpt.pt", map_location=f"cuda:{rank}")  # expect: DEV005
e = torch.load("ckpt.pt", "cuda:0")  # expect: DEV005
