import torch


def train(model, x, y, optimizer):
    with torch.autocast(device_type="npu", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    with torch.autocast("cpu"):
        loss = model(x).sum()
    loss.backward()


def infer(model, x):
    with torch.autocast(device_type="npu", enabled=False):
        return model(x)
