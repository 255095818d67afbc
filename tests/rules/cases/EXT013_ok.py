import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, TrainingArguments
from ultralytics import YOLO


def load(name):
    model = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=False, torch_dtype=torch.bfloat16)
    flash = AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")  # NPU path since transformers 4.51
    return model, flash


def quantized(name):
    # the config call is EXT012's finding, not each keyword inside it
    return BitsAndBytesConfig(load_in_4bit=True, load_in_8bit=False)


def training_args(out_dir):
    return TrainingArguments(out_dir, bf16=True, half_precision_backend="auto", optim="adamw_torch_npu_fused")


def compiled(model):
    return torch.compile(model, backend="inductor")


def export(weights):
    YOLO(weights).export(format="onnx", opset=17)
