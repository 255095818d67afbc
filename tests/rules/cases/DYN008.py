import torch
from torchvision import transforms

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize([0.5] * 3, [0.5] * 3)])


def preprocess(x):
    return (x - MEAN) / STD


model = torch.nn.Conv2d(3, 8, 3).eval()
torch.onnx.export(model, preprocess(torch.rand(1, 3, 32, 32)), "m.onnx", opset_version=11)  # expect: DYN008
