import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
with torch.autocast(device_type=device):
    pass
with torch.autocast("npu"):
    pass
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    pass
scaler = torch.amp.GradScaler("npu")
scaler = torch.amp.GradScaler(device=device)
