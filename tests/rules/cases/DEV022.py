import os

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"  # expect: DEV022
conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF")  # expect: DEV022
cmd = "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 python train.py"  # expect: DEV022
