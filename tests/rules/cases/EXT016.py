import tensorrt as trt  # expect: EXT016
import tensorrt.plugin  # a plain submodule import after `import tensorrt`: not reported again
import torch
import torch_tensorrt  # expect: EXT016
from torch2trt import TRTModule, torch2trt  # expect: EXT016
from deepspeed.ops.transformer import DeepSpeedTransformerConfig, DeepSpeedTransformerLayer  # expect: EXT016
from flash_attn_interface import flash_attn_func  # expect: EXT016

try:
    from mamba_ssm import Mamba  # expect: EXT016
except ImportError:
    Mamba = None


def engine(model, x):
    return torch2trt(model, [x], fp16_mode=True)
