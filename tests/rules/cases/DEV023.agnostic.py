import torch

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

if x.device.type in ("cuda", "npu"):  # expect: DEV023
    pass
if device.type not in ('cuda', 'npu'):  # expect: DEV023
    pass
pin = ("cuda" in str(device) or "npu" in str(device))  # expect: DEV023
gpu = str(device).startswith(("cuda", "npu"))  # expect: DEV023
if args.device in ("cuda", "npu"):  # expect: DEV023
    pass
multi = dev in (f"{DEVICE_TYPE}:0", f"{DEVICE_TYPE}:1")  # expect: DEV023
