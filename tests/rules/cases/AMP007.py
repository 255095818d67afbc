import torch


def step(model, x, y, optimizer):
    with torch.no_grad():
        pass
    with torch.autocast(device_type="npu"):  # expect: AMP007
        loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    with torch.autocast("npu", dtype=torch.float16):
        loss2 = model(x).sum()
    loss2.backward()
    optimizer.step()
