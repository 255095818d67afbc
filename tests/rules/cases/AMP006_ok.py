import torch


def step(model, x, y, scaler):
    with torch.autocast(device_type="npu"):
        loss = torch.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    with torch.autocast(device_type="npu", enabled=False):
        loss.backward()
    with torch.no_grad():
        loss.backward()
