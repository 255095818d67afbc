import torch

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

a = torch.load("ckpt.pt", map_location=DEVICE_TYPE)  # expect: DEV005
b = torch.load("ckpt.pt", map_location=f"{DEVICE_TYPE}:0", weights_only=True)  # expect: DEV005
c = torch.load("ckpt.pt", map_location={"cuda:0": f"{DEVICE_TYPE}:1"})  # expect: DEV005
d = torch.load("ckpt.pt", map_location=f"{DEVICE_TYPE}:{rank}")  # expect: DEV005
e = torch.load("ckpt.pt", f"{DEVICE_TYPE}:0")  # expect: DEV005
