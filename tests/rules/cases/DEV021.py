import os
import subprocess

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"  # expect: DEV021
gpus = os.getenv("CUDA_VISIBLE_DEVICES", "")  # expect: DEV021
os.environ.setdefault('CUDA_VISIBLE_DEVICES', "0")  # expect: DEV021
if "CUDA_VISIBLE_DEVICES" in os.environ:  # expect: DEV021
    pass
subprocess.run("CUDA_VISIBLE_DEVICES=1 python eval.py", shell=True)  # expect: DEV021
os.system(f"CUDA_VISIBLE_DEVICES={gpu} python eval.py")  # expect: DEV021
env = {"CUDA_LAUNCH_BLOCKING": "1"}  # expect: DEV021
