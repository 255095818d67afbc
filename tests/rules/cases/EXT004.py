import xformers  # expect: EXT004
import xformers.ops as xops  # same package as line 1: not reported again
from xformers.ops import memory_efficient_attention  # expect: EXT004
