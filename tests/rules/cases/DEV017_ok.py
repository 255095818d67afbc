import pickle

import torch

state = torch.load(path, map_location="cpu")
state = torch.load(path, "cpu")
state = torch.load(path, **kwargs)
obj = pickle.load(fh)
cfg = yaml.load(text)
