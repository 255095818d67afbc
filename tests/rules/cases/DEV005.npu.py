import torch

a = torch.load("ckpt.pt", map_location="npu")  # expect: DEV005
b = torch.load("ckpt.pt", map_location="npu:0", weights_only=True)  # expect: DEV005
c = torch.load("ckpt.pt", map_location={"cuda:0": "npu:1"})  # expect: DEV005
d = torch.load("ckpt.pt", map_location=f"npu:{rank}")  # expect: DEV005
e = torch.load("ckpt.pt", "npu:0")  # expect: DEV005
