import torch.nn.functional as F
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2")


def attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
