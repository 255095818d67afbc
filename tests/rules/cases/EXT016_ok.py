import deepspeed
import numba
import onnxruntime as ort
import torch
import xformers.ops  # EXT004's import, not EXT016's
from deepspeed.ops.adam import FusedAdam  # DeepSpeed builds FusedAdam for the NPU accelerator
from flash_attn import flash_attn_func  # EXT003's import

from .trt_utils import build_engine  # the project's own module


def optimizer(model):
    return FusedAdam(model.parameters(), lr=1e-4)
