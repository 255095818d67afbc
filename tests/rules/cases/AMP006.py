import torch


def step(model, x, y, scaler, optimizer):
    with torch.autocast(device_type="npu"):
        loss = torch.nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()  # expect: AMP006
    with torch.cuda.amp.autocast(), open("log.txt") as fh:
        if loss > 0:
            loss.backward()  # expect: AMP006
