import torch

if x.device.type == "cuda":  # expect: DEV023
    pass
if device.type != 'cuda':  # expect: DEV023
    pass
pin = "cuda" in str(device)  # expect: DEV023
gpu = str(device).startswith("cuda")  # expect: DEV023
if args.device == "cuda":  # expect: DEV023
    pass
multi = dev in ("cuda:0", "cuda:1")  # expect: DEV023
