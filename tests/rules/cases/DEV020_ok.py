import torch

torch.npu.matmul.allow_hf32 = True
tf32 = torch.backends.cuda.matmul.allow_tf32
cfg.allow_tf32 = True
