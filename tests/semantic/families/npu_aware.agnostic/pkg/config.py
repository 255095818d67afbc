"""A config module without torch: no import torch_npu goes here."""
import torch

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"
DEFAULTS = {"device": DEVICE_TYPE, "batch_size": 8}  # expect: DEV024
