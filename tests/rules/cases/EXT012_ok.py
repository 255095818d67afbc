import tensorrt as trt
import torch
import torch.nn.functional as F
from diffusers import StableDiffusionXLPipeline
from diffusers.utils import is_torch_npu_available


def build_pipeline(model_dir):
    pipe = StableDiffusionXLPipeline.from_pretrained(model_dir, torch_dtype=torch.float16)
    if is_torch_npu_available():
        pipe.unet.enable_npu_flash_attention()
    else:
        pipe.enable_attention_slicing()
    return pipe


def enable_xformers_memory_efficient_attention(model):
    """The project's own helper of the same name (no library behind it)."""
    return model


def attention(q, k, v):
    enable_xformers_memory_efficient_attention(None)
    return F.scaled_dot_product_attention(q, k, v)


def build(logger, onnx_path):
    # through the TensorRT import: EXT016 reports the import, not each call
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    return builder.build_serialized_network(network, builder.create_builder_config())
