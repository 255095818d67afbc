import torch
from torch.backends import cudnn

torch.backends.cuda.matmul.allow_tf32 = True  # expect: DEV020
torch.backends.cudnn.allow_tf32 = False  # expect: DEV020
cudnn.allow_tf32 = True  # expect: DEV020
