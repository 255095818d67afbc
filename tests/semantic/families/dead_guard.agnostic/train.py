"""Code under a CUDA-only test is dead on an Ascend host: the test is the finding."""
import torch

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"


def setup(model):
    if DEVICE_TYPE != "cpu":  # expect: DEV007
        model = model.to(DEVICE_TYPE)  # expect: DEV001
        torch.accelerator.synchronize()  # expect: DEV008
    return model


def gated(model):
    # the branch calls an API with no NPU counterpart fixed safely: the test is left alone too
    if torch.cuda.is_available():  # expect: DEV007
        major, _minor = torch.cuda.get_device_capability()  # expect: DEV009
        model = model.cuda()  # expect: DEV001
    return model


def early_exit(x):
    if not (DEVICE_TYPE != "cpu"):  # expect: DEV007
        return x
    return x.to(DEVICE_TYPE)  # expect: DEV001


def on_device(x, device):
    if device.type in ("cuda", "npu"):  # expect: DEV023
        torch.accelerator.synchronize()  # expect: DEV008
    return x


class Runner:
    def __init__(self):
        self.use_cuda = DEVICE_TYPE != "cpu"  # expect: DEV007

    def step(self, x):
        if self.use_cuda:
            x = x.to(DEVICE_TYPE)  # expect: DEV001
        return x


def either(x):
    return x.to(DEVICE_TYPE) if DEVICE_TYPE != "cpu" else x  # expect: DEV001, DEV007


def requires_gpu(rank, model):
    # an assert stops the run: the test is the error, and what follows is the main path (not dead)
    assert DEVICE_TYPE != "cpu", "Training currently requires at least one GPU."  # expect: DEV007
    device = rank % torch.accelerator.device_count()  # expect: DEV008
    return model.to(f"{DEVICE_TYPE}:{device}")  # expect: DEV006


def maybe_distributed(world_size):
    import torch.distributed as dist

    # a warning in the branch (no is_initialized() guard) does not stop the guard's fix
    if torch.accelerator.device_count() > 1:  # expect: DEV008
        dist.init_process_group(dist.get_default_backend_for_device(DEVICE_TYPE), world_size=world_size)  # expect: DST001, DST004
