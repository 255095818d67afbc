import os

os.environ["PYTORCH_NPU_ALLOC_CONF"] = "expandable_segments:True"
print("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True helps on GPU")
"""PYTORCH_CUDA_ALLOC_CONF is documented here."""
