import torch

a = torch.randn(4, 4)
q, r = torch.linalg.qr(a)
y = torch.bmm(a[None], a[None])   # ✘ only on Ascend 950DT; no chip configured here
model = torch.nn.DataParallel(torch.nn.Linear(4, 4))  # reported by DST005, not twice
with torch.backends.cuda.sdp_kernel(enable_flash=True):  # reported by DEV019
    pass
