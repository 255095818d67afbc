import torch
from apex import amp  # expect: AMP004
import apex.amp as apex_amp  # expect: AMP004
from apex.amp import scale_loss  # expect: AMP004
