import torch
from torch.backends import cudnn

torch.backends.cudnn.deterministic = True  # expect: DEV018
cudnn.deterministic = True  # expect: DEV018
