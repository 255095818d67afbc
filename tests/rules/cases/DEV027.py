import torch


def train(model, loader, device):
    cuda = device.type != "cpu"
    scaler = torch.cuda.amp.GradScaler(enabled=cuda)  # expect: DEV027
    for x in loader:
        x = x.cuda() if cuda else x  # expect: DEV027
        loss = model(x).sum()
        scaler.scale(loss).backward()
        if cuda:  # expect: DEV027
            torch.cuda.synchronize()


def evaluate(model, device):
    cpu = device.type == "cpu"
    if not cpu:  # expect: DEV027
        torch.cuda.empty_cache()


class Trainer:
    def __init__(self, device, args):
        self.use_gpu = str(device) != "cpu"
        if self.use_gpu and args.benchmark:  # expect: DEV027
            torch.cuda.manual_seed(0)

        if self.use_gpu:
            torch.backends.cudnn.benchmark = True  # a cuDNN flag does nothing on an NPU: DEV019's, not work

    def step(self, batch):
        self.use_gpu and torch.cuda.synchronize()  # expect: DEV027
        return batch.to("cuda") if self.use_gpu else batch  # expect: DEV027
