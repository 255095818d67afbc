from flash_attn import flash_attn_func  # expect: EXT003
from flash_attn.bert_padding import pad_input, unpad_input  # expect: EXT003
import flash_attn_2_cuda  # expect: EXT003

try:
    from flash_attn.layers.rotary import apply_rotary_emb  # expect: EXT003
except ImportError:
    apply_rotary_emb = None
