import torch

torch.manual_seed(seed)
torch.npu.manual_seed(seed)  # expect: DEV011
torch.npu.manual_seed_all(seed)  # expect: DEV011
state = torch.npu.get_rng_state()  # expect: DEV011
torch.npu.set_rng_state(state)  # expect: DEV011
