import torch
import torch as t

state = torch.load(path)  # expect: DEV017
ckpt = t.load("model.pt", weights_only=True)  # expect: DEV017
model.load_state_dict(torch.load(os.path.join(d, "best.pt")))  # expect: DEV017
