"""Seeding, backend flags, timing and GPU memory bookkeeping."""

import os
import platform
import random
import time

import numpy as np
import torch


def select_gpus(gpu_ids):
    """Expose only ``gpu_ids`` (e.g. "0,1") to this process; call before any CUDA work."""
    os.environ["CUDA_VISIBLE_DEVICES"] = gpu_ids


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def configure_backends(deterministic=False):
    # Let cuDNN pick the fastest convolution algorithms for our fixed input size.
    torch.backends.cudnn.benchmark = not deterministic
    torch.backends.cudnn.deterministic = deterministic
    torch.backends.cuda.matmul.allow_tf32 = True


def default_device():
    """The first GPU if there is one, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def describe_environment():
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    return (
        f"python {platform.python_version()}, torch {torch.__version__}, "
        f"{torch.cuda.device_count()} GPU(s) visible, GPU 0: {gpu}"
    )


def synchronize(device):
    """Wait for queued kernels so that wall-clock timings mean something."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Throughput:
    """Images per second between ``start()`` and ``stop(n_images)``."""

    def __init__(self, device):
        self.device = device
        self.t0 = None

    def start(self):
        synchronize(self.device)
        self.t0 = time.perf_counter()

    def stop(self, n_images):
        synchronize(self.device)
        elapsed = time.perf_counter() - self.t0
        return n_images / max(elapsed, 1e-9)


def release_cached_memory(device):
    """Give cached blocks back on whichever accelerator the run uses."""
    if device.type == "xpu":
        torch.xpu.empty_cache()
    elif hasattr(torch, "npu") and device.type == "npu":
        torch.npu.empty_cache()
    elif device.type == "cuda":
        torch.cuda.empty_cache()


def reset_memory_stats(device):
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def peak_memory_mb(device):
    return torch.cuda.max_memory_allocated(device) / 2**20
