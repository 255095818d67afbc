import torch
import torch.distributed as dist


class NativeScaler:
    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()  # expect: AMP001

    def __call__(self, loss, optimizer):
        self._scaler.scale(loss).backward()
        self._scaler.step(optimizer)  # expect: AMP003
        self._scaler.update()


class CudaTimer:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        torch.cuda.synchronize()  # expect: DEV008


class MetricLogger:
    def __init__(self):
        self.meters = {}

    def update(self, **kw):
        self.meters.update(kw)

    def log_every(self, it):
        torch.cuda.synchronize()  # expect: DEV008
        return it

    def synchronize_between_processes(self):
        t = torch.tensor([len(self.meters)], device="cuda")  # expect: DEV004
        dist.all_reduce(t)


class StreamBase:
    def __init__(self):
        self.stream = torch.cuda.Stream()  # expect: DEV012


class Prefetcher(StreamBase):
    def next(self, batch):
        return batch
