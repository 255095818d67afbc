import os

os.environ["PYTORCH_NPU_ALLOC_CONF"] = "expandable_segments:True"
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128,garbage_collection_threshold:0.6"
conf = os.environ.get("PYTORCH_NPU_ALLOC_CONF", "")
cmd = "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True torchrun train.py"
