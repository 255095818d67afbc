import xformers  # expect: EXT004
import xformers.ops as xops  # expect: EXT004
from xformers.ops import memory_efficient_attention  # expect: EXT004
