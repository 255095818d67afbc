import subprocess

out = subprocess.run(["npu-smi", "info"], capture_output=True, text=True)
subprocess.run(["echo", "nvidia-smi"])
print("install nvidia-smi first")
