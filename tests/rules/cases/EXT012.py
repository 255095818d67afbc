import torch
from diffusers import StableDiffusionXLPipeline, UNet2DConditionModel
from diffusers.utils.import_utils import is_xformers_available
from transformers import AutoModelForCausalLM, BitsAndBytesConfig
from deepspeed.ops.op_builder import TransformerBuilder


def build_pipeline(model_dir, low_memory):
    pipe = StableDiffusionXLPipeline.from_pretrained(model_dir, torch_dtype=torch.float16)
    pipe.enable_xformers_memory_efficient_attention()  # expect: EXT012
    pipe.unet.set_use_memory_efficient_attention_xformers(True)  # expect: EXT012
    if low_memory:
        (
            pipe
            .vae
            .enable_xformers_memory_efficient_attention()  # expect: EXT012
        )
    return pipe


def prepare_unet(args):
    unet = UNet2DConditionModel.from_pretrained(args.model, subfolder="unet")
    if args.enable_xformers_memory_efficient_attention:
        if is_xformers_available():
            unet.enable_xformers_memory_efficient_attention()  # expect: EXT012
        else:
            raise ValueError("xformers is not available. Make sure it is installed correctly")
    return unet


def load_quantized(name):
    quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)  # expect: EXT012
    return AutoModelForCausalLM.from_pretrained(name, quantization_config=quant)


def load_engine(runtime, path):
    with open(path, "rb") as fh:
        engine = runtime.deserialize_cuda_engine(fh.read())  # expect: EXT012
    return engine.create_execution_context()  # expect: EXT012


def fused_layer():
    return TransformerBuilder().load()  # expect: EXT012
