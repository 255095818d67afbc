import subprocess
import sys

import onnxruntime as ort
from setuptools import setup
from transformers import TrainingArguments
from deepspeed.accelerator import get_accelerator

PROVIDERS = ["CUDAExecutionProvider", "CPUExecutionProvider"]  # expect: EXT014


def session(path, device_id=0):
    return ort.InferenceSession(
        path,
        providers=[
            ("TensorrtExecutionProvider", {"device_id": device_id}),  # expect: EXT014
            ("CUDAExecutionProvider", {"device_id": device_id}),  # expect: EXT014
        ],
    )


def install_runtime():
    subprocess.check_call([sys.executable, "-m", "pip", "install", "onnxruntime-gpu"])  # expect: EXT014


def trainer_args(out_dir):
    return TrainingArguments(out_dir, optim="paged_adamw_8bit", bf16=True)  # expect: EXT014


def attention_backend(pipe):
    pipe.transformer.set_attention_backend("xformers")  # expect: EXT014


def fused_kernel():
    return get_accelerator().create_op_builder("SparseAttnBuilder")  # expect: EXT014


def gpu_providers():
    providers = ["CPUExecutionProvider"]
    if "CUDAExecutionProvider" in ort.get_available_providers():
        providers.insert(0, "CUDAExecutionProvider")  # expect: EXT014
    return providers


SMI = ["nvidia-smi", "--query-gpu=memory.used", "--format=csv"]  # expect: EXT014

setup(name="detector", install_requires=["onnxruntime-gpu>=1.17", "numpy"])  # expect: EXT014
