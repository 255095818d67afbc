import torch


def train(model, loader, epochs):
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            loss = model(x, y)
            torch.cuda.empty_cache()  # expect: MEM004
        torch.cuda.empty_cache()
    while True:
        for batch in batches:
            torch.npu.empty_cache()  # expect: MEM004
