"""Launch helper.  Set NCCL_DEBUG=INFO when debugging on GPUs (docstring, not code)."""
import os

os.environ["HCCL_SOCKET_IFNAME"] = "eth0"
os.environ["ASCEND_GLOBAL_LOG_LEVEL"] = "1"
msg = "see the NCCL_ docs"
name = "MY_NCCL_SETTING"
print("NCCL error: set NCCL_DEBUG=INFO for details")
