import torch

torch.manual_seed(seed)
torch.cuda.manual_seed(seed)  # expect: DEV011
torch.cuda.manual_seed_all(seed)  # expect: DEV011
state = torch.cuda.get_rng_state()  # expect: DEV011
torch.cuda.set_rng_state(state)  # expect: DEV011
