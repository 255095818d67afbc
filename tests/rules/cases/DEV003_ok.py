import torch

d0 = torch.device("cpu")
d1 = torch.device("npu", 0)
d2 = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # DEV007's
d3 = torch.device(name)
d4 = torch.device("meta")
