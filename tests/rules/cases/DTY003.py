import torch

model = torch.nn.Linear(4, 4).double()  # expect: DTY003
x = torch.randn(2, 4).npu()
y = x.double()  # expect: DTY003
z = x.to(torch.float64)  # expect: DTY003
w = x.to(x.device, dtype=torch.double)  # expect: DTY003
v = x.type(torch.DoubleTensor)  # expect: DTY003


def extract(arr, timesteps, device):
    return torch.from_numpy(arr).to(device)[timesteps]  # expect: DTY003
