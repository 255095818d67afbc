import importlib.util

import torch

before = hasattr(torch, "npu")
spec = importlib.util.find_spec("torch_npu") is not None
import torch_npu  # noqa: E402

print("AUTOLOAD", before, spec, hasattr(torch, "npu"), torch_npu.__version__)
