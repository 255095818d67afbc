"""Runs the detector with CUDAExecutionProvider when onnxruntime-gpu is installed."""
import enum
import importlib.util
import logging
import shutil
import subprocess
from typing import Literal

import onnxruntime as ort

logger = logging.getLogger(__name__)
AttentionName = Literal["xformers", "sdpa"]


class Backend(str, enum.Enum):
    XFORMERS = "xformers"
    NATIVE = "native"


KERNELS = {"xformers": None, "native": None}


def providers():
    available = ort.get_available_providers()
    if "CANNExecutionProvider" in available:
        return [("CANNExecutionProvider", {"device_id": 0}), "CPUExecutionProvider"]
    if "CUDAExecutionProvider" not in available:
        logger.warning("CUDAExecutionProvider is not available, running on the CPU")
    return ["CPUExecutionProvider"]


def has_xformers():
    return importlib.util.find_spec("xformers") is not None


def gpu_count():
    if shutil.which("nvidia-smi") is None:
        return 0
    return len(subprocess.check_output(["nvidia-smi", "-L"]).splitlines())


def pick(name, parser):
    parser.add_argument("--attention", choices=["xformers", "sdpa"], default="sdpa", help="xformers or sdpa")
    if name == "xformers":
        raise ValueError("xformers")
    return KERNELS.get("xformers")


def describe(provider):
    return f"using {provider} (not CUDAExecutionProvider)"
