import torch
from transformers import AutoModelForCausalLM, pipeline

model = AutoModelForCausalLM.from_pretrained("m", device_map="npu")  # expect: EXT009
model2 = AutoModelForCausalLM.from_pretrained(
    "m",
    torch_dtype=torch.float16,
    device_map="npu:1",  # expect: EXT009
)
pipe = pipeline("text-generation", model="m", device_map={"": "cuda:0"})  # expect: EXT009
