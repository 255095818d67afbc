"""Patterns a reviewer of real migrations rejected (dino, yolov5, diffusers, LLaMA-Factory shapes)."""
import pytest
import torch

from .env import is_torch_cuda_available, is_torch_npu_available

BACKEND_OF = {"hip": "cuda", "cpu": "gloo"}


def log_every(header):
    # the same test twice in one function: both change together, or neither
    if torch.cuda.is_available():  # expect: DEV007
        log_msg = header + " max mem: {memory:.0f}"
    else:
        log_msg = header
    if torch.cuda.is_available():  # expect: DEV007
        print(log_msg.format(memory=torch.cuda.max_memory_allocated() / 2**20))  # expect: DEV010
        print(torch.cuda.get_device_capability())  # expect: DEV009
    else:
        print(log_msg)


def load(path):
    cuda = torch.cuda.is_available()  # expect: DEV007
    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if cuda else ["CPUExecutionProvider"]  # expect: EXT014
    return providers


def current():
    return torch.accelerator.current_accelerator() if hasattr(torch, "accelerator") else torch.cuda.current_device()  # expect: DEV008


def empty():
    if is_torch_cuda_available():
        torch.cuda.empty_cache()
    elif is_torch_npu_available():
        torch.npu.empty_cache()


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    elif is_torch_npu_available():
        torch.npu.synchronize()


@pytest.mark.runs_on(["cuda"])
def test_sglang():
    pass
