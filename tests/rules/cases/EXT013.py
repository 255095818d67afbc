import torch
from transformers import AutoModelForCausalLM, TrainingArguments
from ultralytics import YOLO

USE_8BIT = True


def load(name, args):
    model = AutoModelForCausalLM.from_pretrained(
        name,
        load_in_8bit=True,  # expect: EXT013
        device_map="auto",
    )
    other = AutoModelForCausalLM.from_pretrained(name, load_in_4bit=args.four_bit)  # expect: EXT013
    third = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=USE_8BIT)  # expect: EXT013
    return model, other, third


def training_args(out_dir):
    return TrainingArguments(out_dir, fp16=True, half_precision_backend="apex")  # expect: EXT013


def compiled(model):
    return torch.compile(model, backend="tensorrt")  # expect: EXT013


def export(weights):
    YOLO(weights).export(format="engine", half=True)  # expect: EXT013


def maybe_quantized(name):
    if torch.cuda.is_available():
        return AutoModelForCausalLM.from_pretrained(name, load_in_4bit=True)  # expect: EXT013
    return AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16)
