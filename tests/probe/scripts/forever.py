import torch

x = torch.ones(2)
while True:
    x = x + 1
