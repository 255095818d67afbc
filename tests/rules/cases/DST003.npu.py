import os
import subprocess

os.environ["HCCL_SOCKET_IFNAME"] = "eth0"  # expect: DST003
os.environ["NCCL_DEBUG"] = "INFO"  # expect: DST003
os.environ.setdefault("TORCH_HCCL_ASYNC_ERROR_HANDLING", "1")  # expect: DST003
timeout = os.getenv('HCCL_BLOCKING_WAIT')  # expect: DST003
cmd = "HCCL_SOCKET_IFNAME=eth0 torchrun --nproc_per_node=8 train.py"  # expect: DST003
subprocess.run("export NCCL_IB_DISABLE=1 && python train.py", shell=True)  # expect: DST003
env = {
    "HCCL_DESYNC_DEBUG": "1",  # expect: DST003
    "PATH": os.environ["PATH"],
}
