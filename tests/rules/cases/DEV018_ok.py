import torch

torch.use_deterministic_algorithms(True)
if torch.backends.cudnn.deterministic:
    pass
cfg.deterministic = True
