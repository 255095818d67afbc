import numpy as np
import torch

x = torch.randn(2, 4)
a = x.float()
b = x.cpu().double()  # host-side metric
c = x.detach().cpu().numpy().astype(np.float64)
d = x.to(torch.float32)
e = x.to("cpu", torch.float64)
f = x.to(torch.float64, device="cpu")
g = np.double(3.0)
h = x.type(torch.float16)
if x.dtype == torch.float64:
    pass


def extract(arr, device):
    a = torch.from_numpy(arr).to(device, dtype=torch.float32)
    b = torch.from_numpy(arr.astype(np.float32)).to(device)
    c = torch.from_numpy(arr).to(device).float()
    d = torch.from_numpy(arr).to("cpu")
    return a, b, c, d
