import os
import subprocess

os.environ["PYTORCH_NPU_ALLOC_CONF"] = "expandable_segments:True,max_split_size_mb:128"  # expect: MEM005
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"  # expect: MEM005
os.environ.setdefault("PYTORCH_ALLOC_CONF", "roundup_power2_divisions:4")  # expect: MEM005
subprocess.run("PYTORCH_NPU_ALLOC_CONF=segment_size_mb:64 python train.py", shell=True)  # expect: MEM005
