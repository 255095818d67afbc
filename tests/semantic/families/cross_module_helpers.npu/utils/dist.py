import torch
import torch.distributed as dist


def setup_distributed(rank):
    dist.init_process_group("hccl", rank=rank)  # expect: DST001, DST004
    torch.npu.set_device(rank)  # expect: DEV008


def _sync():
    torch.npu.synchronize()  # expect: DEV008


def train_step(model, batch, opt):
    loss = model(batch).sum()
    loss.backward()
    opt.step()
    _sync()
    return loss


def plain_helper(x):
    return x * 2
