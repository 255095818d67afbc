import torch
import torch.nn as nn


class Wrapped(nn.Module):
    def __init__(self, net, mean, std):
        super().__init__()
        self.net = net
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)

    def forward(self, x):
        return self.net((x - self.mean) / self.std)  # inside the exported graph


model = Wrapped(nn.Conv2d(3, 8, 3), torch.zeros(1, 3, 1, 1), torch.ones(1, 3, 1, 1)).eval()
torch.onnx.export(model, torch.rand(1, 3, 32, 32), "m.onnx", opset_version=11)
