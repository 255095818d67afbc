"""Code under a CUDA-only test is dead on an Ascend host: the test is the finding."""
import torch


def setup(model):
    if torch.npu.is_available():  # expect: DEV007
        model = model.npu()  # expect: DEV001
        torch.npu.synchronize()  # expect: DEV008
    return model


def gated(model):
    # the branch calls an API with no NPU counterpart fixed safely: the test is left alone too
    if torch.cuda.is_available():  # expect: DEV007
        major, _minor = torch.cuda.get_device_capability()  # expect: DEV009
        model = model.cuda()  # expect: DEV001
    return model


def early_exit(x):
    if not torch.npu.is_available():  # expect: DEV007
        return x
    return x.npu()  # expect: DEV001


def on_device(x, device):
    if device.type == "npu":  # expect: DEV023
        torch.npu.synchronize()  # expect: DEV008
    return x


class Runner:
    def __init__(self):
        self.use_cuda = torch.npu.is_available()  # expect: DEV007

    def step(self, x):
        if self.use_cuda:
            x = x.npu()  # expect: DEV001
        return x


def either(x):
    return x.npu() if torch.npu.is_available() else x  # expect: DEV001, DEV007


def requires_gpu(rank, model):
    # an assert stops the run: the test is the error, and what follows is the main path (not dead)
    assert torch.npu.is_available(), "Training currently requires at least one GPU."  # expect: DEV007
    device = rank % torch.npu.device_count()  # expect: DEV008
    return model.to(f"npu:{device}")  # expect: DEV006


def maybe_distributed(world_size):
    import torch.distributed as dist

    # a warning in the branch (no is_initialized() guard) does not stop the guard's fix
    if torch.npu.device_count() > 1:  # expect: DEV008
        dist.init_process_group("hccl", world_size=world_size)  # expect: DST001, DST004
