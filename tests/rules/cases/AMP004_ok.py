import torch
from torch import amp
from apex.optimizers import FusedAdam  # an apex optimizer, not apex.amp (EXT rules)
