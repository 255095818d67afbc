import random

import numpy as np
import torch

random.seed(0)
np.random.seed(0)
torch.manual_seed(0)
torch.npu.manual_seed_all(0)
rng.manual_seed(0)
