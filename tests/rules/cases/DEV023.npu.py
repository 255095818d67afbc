import torch

if x.device.type == "npu":  # expect: DEV023
    pass
if device.type != 'npu':  # expect: DEV023
    pass
pin = "npu" in str(device)  # expect: DEV023
gpu = str(device).startswith("npu")  # expect: DEV023
if args.device == "npu":  # expect: DEV023
    pass
multi = dev in ("npu:0", "npu:1")  # expect: DEV023
