import os


def main():
    """Set CUDA_VISIBLE_DEVICES before running."""
    os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"
    print("CUDA_VISIBLE_DEVICES is ignored on NPU")
    logger.warning(f"unset CUDA_VISIBLE_DEVICES={x}")
    name = "MY_CUDA_VISIBLE_DEVICES_NOTE"
