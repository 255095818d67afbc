"""catalogue/install_and_serving.toml: pip pairing, missing wheels, tensors on two devices, vLLM KV cache."""

from __future__ import annotations

import json

import pytest

from tests.cli_util import run_cli


def _first(tmp_path, text):
    p = tmp_path / "x.log"
    p.write_text(text)
    doc = json.loads(run_cli("diagnose", str(p), "--format", "json", "--fail-on", "never").out)
    return doc["findings"][0]["id"] if doc["findings"] else None


@pytest.mark.parametrize("text,want", [
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, npu:0 and cpu!\n", "tensors-on-two-devices"),
    ("RuntimeError: Expected all tensors to be on the same device. Expected NPU tensor, please check whether the input tensor device is correct.\n", "expected-npu-tensor"),
    ("ERROR: pip's dependency resolver does not currently take into account all the packages that are installed.\n"
     "torch-npu 2.6.0 requires torch==2.6.0, but you have torch 2.7.0+cpu which is incompatible.\n", "pip-torch-npu-torch-mismatch"),
    ("ERROR: Could not find a version that satisfies the requirement torch_npu==2.9.0 (from versions: none)\n", "pip-no-torch-npu-wheel"),
    ("INFO 05-01 10:00:01 worker.py:240] Memory profiling takes 5.1 seconds\n"
     "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n", "vllm-kv-cache-memory"),
])
def test_family_entries(tmp_path, text, want):
    assert _first(tmp_path, text) == want


@pytest.mark.parametrize("text", [
    "datasets 2.14.0 requires fsspec<=2023.6.0, but you have fsspec 2024.2.0 which is incompatible.\n",
    "ERROR: No matching distribution found for flash-attn==2.5.8\n",
    "INFO 05-01 10:00:02 gpu_executor.py:122] # NPU blocks: 4096, # CPU blocks: 512; KV cache usage: 12.0%\n",
])
def test_benign_or_other_packages_do_not_match(tmp_path, text):
    assert _first(tmp_path, text) not in ("pip-torch-npu-torch-mismatch", "pip-no-torch-npu-wheel", "vllm-kv-cache-memory")
