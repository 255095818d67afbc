import torch
from transformers import AutoModelForCausalLM, pipeline

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

model = AutoModelForCausalLM.from_pretrained("m", device_map=DEVICE_TYPE)  # expect: EXT009
model2 = AutoModelForCausalLM.from_pretrained(
    "m",
    torch_dtype=torch.float16,
    device_map=f"{DEVICE_TYPE}:1",  # expect: EXT009
)
pipe = pipeline("text-generation", model="m", device_map={"": "cuda:0"})  # expect: EXT009
