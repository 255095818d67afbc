import torch

torch.manual_seed(seed)
torch.manual_seed(seed)  # expect: DEV011
torch.manual_seed(seed)  # expect: DEV011
state = torch.get_device_module().get_rng_state()  # expect: DEV011
torch.get_device_module().set_rng_state(state)  # expect: DEV011
