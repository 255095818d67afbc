import torch
from torch.backends import cudnn

torch.backends.cudnn.benchmark = True  # expect: DEV019
cudnn.enabled = False  # expect: DEV019
torch.backends.cuda.enable_flash_sdp(False)  # expect: DEV019
with torch.backends.cudnn.flags(enabled=False):  # expect: DEV019
    pass
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.attention

with sdpa_kernel(SDPBackend.FLASH_ATTENTION):  # expect: DEV019
    pass
with torch.nn.attention.sdpa_kernel([SDPBackend.MATH]):  # expect: DEV019
    pass
