"""Building CUDA kernels is CUDA-only by intent: the availability test stays as written."""
import os

import torch
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension


def get_extensions():
    extension = CppExtension
    if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":  # expect: DEV007
        extension = CUDAExtension
    return extension
