import torch
from transformers import AutoModelForCausalLM

optimizer_cls = torch.optim.AdamW
model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
