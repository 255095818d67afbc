import torch

a = torch.load("ckpt.pt", map_location="cpu")
b = torch.load("ckpt.pt", map_location={"cuda:0": "cpu"})
c = torch.load("ckpt.pt", map_location=lambda storage, loc: storage)
d = pickle.load(fh)
e = torch.load("ckpt.pt", map_location=device)
