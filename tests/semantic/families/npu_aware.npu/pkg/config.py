"""A config module without torch: no import torch_npu goes here."""
DEFAULTS = {"device": "npu", "batch_size": 8}  # expect: DEV024
