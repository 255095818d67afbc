import torch

bench = torch.backends.cudnn.benchmark
torch.backends.cudnn.deterministic = True  # DEV018's
torch.backends.cuda.matmul.allow_tf32 = True  # DEV020's
args.benchmark = True
torch.backends.mps.is_available()
