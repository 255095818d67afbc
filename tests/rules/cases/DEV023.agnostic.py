import torch

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

if x.device.type != "cpu":  # expect: DEV023
    pass
if device.type == 'cpu':  # expect: DEV023
    pass
pin = "cpu" not in str(device)  # expect: DEV023
gpu = not str(device).startswith("cpu")  # expect: DEV023
if args.device != "cpu":  # expect: DEV023
    pass
multi = dev in (f"{DEVICE_TYPE}:0", f"{DEVICE_TYPE}:1")  # expect: DEV023
