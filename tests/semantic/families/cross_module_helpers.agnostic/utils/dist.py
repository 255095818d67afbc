import torch
import torch.distributed as dist

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"


def setup_distributed(rank):
    dist.init_process_group(dist.get_default_backend_for_device(DEVICE_TYPE), rank=rank)  # expect: DST001, DST004
    torch.accelerator.set_device_index(rank)  # expect: DEV008


def _sync():
    torch.accelerator.synchronize()  # expect: DEV008


def train_step(model, batch, opt):
    loss = model(batch).sum()
    loss.backward()
    opt.step()
    _sync()
    return loss


def plain_helper(x):
    return x * 2
