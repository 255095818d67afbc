import torch


def train(model, loader, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            model(x, y)
        torch.cuda.empty_cache()
    torch.cuda.empty_cache()


def evaluate():
    torch.npu.empty_cache()
