import torch
import torch.distributed as dist

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"


class NativeScaler:
    def __init__(self):
        self._scaler = torch.amp.GradScaler(DEVICE_TYPE, enabled=DEVICE_TYPE != "cpu")  # expect: AMP001

    def __call__(self, loss, optimizer):
        self._scaler.scale(loss).backward()
        self._scaler.step(optimizer)  # expect: AMP003
        self._scaler.update()


class CudaTimer:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        torch.accelerator.synchronize()  # expect: DEV008


class MetricLogger:
    def __init__(self):
        self.meters = {}

    def update(self, **kw):
        self.meters.update(kw)

    def log_every(self, it):
        torch.accelerator.synchronize()  # expect: DEV008
        return it

    def synchronize_between_processes(self):
        t = torch.tensor([len(self.meters)], device=DEVICE_TYPE)  # expect: DEV004
        dist.all_reduce(t)


class StreamBase:
    def __init__(self):
        self.stream = torch.get_device_module().Stream()  # expect: DEV012


class Prefetcher(StreamBase):
    def next(self, batch):
        return batch
