import bitsandbytes as bnb  # expect: EXT005
from bitsandbytes.optim import AdamW8bit  # expect: EXT005
