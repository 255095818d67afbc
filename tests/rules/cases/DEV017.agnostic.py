import torch
import torch as t

state = torch.load(path, map_location="cpu")  # expect: DEV017
ckpt = t.load("model.pt", weights_only=True, map_location="cpu")  # expect: DEV017
model.load_state_dict(torch.load(os.path.join(d, "best.pt"), map_location="cpu"))  # expect: DEV017
