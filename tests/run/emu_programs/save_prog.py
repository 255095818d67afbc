import sys

import torch

m = torch.nn.Linear(3, 2).npu()
torch.save(m.state_dict(), sys.argv[1])
print("SAVED", m.weight.device)
