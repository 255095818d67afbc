import torch

"""Runs on cuda."""
x = torch.ones(2).to("cuda")  # DEV002's
d = torch.device("cuda")  # DEV003's
m = torch.zeros(2, device="cuda")  # DEV004's
s = torch.load("a.pt", map_location={"cuda:0": "cpu"})  # a saved location tag
c = "cuda" if torch.cuda.is_available() else "cpu"  # DEV007's
if x.device.type == "cuda":  # DEV023's
    pass
with torch.autocast("cuda"):  # AMP's
    pass
scaler = torch.amp.GradScaler("cuda")  # AMP's
torch.distributed.init_process_group("nccl", device_id=torch.device("cpu"))
print("cuda")
has = hasattr(torch, "cuda")
stats = timings["cuda"]
label = "cudagraphs"
fmt = "cuda:{}, cpu:{}".format(a, b)
remap = {"cuda:0": "cpu"}  # a saved-location tag, as in a map_location dict
model = AutoModel.from_pretrained(name, device_map="cuda")  # EXT009's
model = AutoModel.from_pretrained(name, device_map={"": "cuda:0"})  # EXT009's
from typing import Literal


def pick(accelerator: Literal["cpu", "cuda", "auto"] = "auto"):
    return accelerator
