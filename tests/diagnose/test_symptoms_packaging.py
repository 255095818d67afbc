"""Packaging families, widened triggers, and an entry whose reading depends on other lines of the same log
(dcmi -8005: device held by another process vs a container without the capabilities / device files)."""

from __future__ import annotations

import pytest

from ascendify.diagnose.engine import diagnose
from tests.diagnose.diag_util import top_finding




@pytest.mark.parametrize("line, fid, word", [
    ("ERROR: No matching distribution found for triton-ascend==3.2.1", "pip-no-matching-distribution", "--extra-index-url"),
    ("ERROR: No matching distribution found for torch-npu==2.5.1.dev20250320", "pip-no-torch-npu-wheel", "index"),
    ("ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/", "pip-resolution-impossible", "+cpu"),
    ("RuntimeError: operator torchvision::nms does not exist", "torchvision-torch-mismatch", "torchvision release"),
    ("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.", "c-compiler-missing", "build-essential"),
    ("error: command 'g++' failed: No such file or directory", "c-compiler-missing", "gcc-c++"),
    ("importlib.metadata.PackageNotFoundError: No package metadata was found for flash_attn", "flash-attn-package-missing", "sdpa"),
    ("RuntimeError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: 0, code: -98, "
     "name: EADDRINUSE, message: address already in use", "dist-port-in-use", "HCCL_IF_BASE_PORT"),
])
def test_packaging_and_widened_triggers(tmp_path, line, fid, word):
    top = top_finding(tmp_path, line + "\n")
    assert top.id == fid
    assert word in top.fix


def test_dcmi_8005_device_held_by_another_process(tmp_path):
    top = top_finding(tmp_path, "DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\ndcmi module initialize failed. ret is -8005\n")
    assert top.id == "npu-smi-dcmi-init" and "occupied by another" in top.cause and not top.variant


def test_dcmi_8005_in_a_container_without_capabilities(tmp_path):
    text = ("+ docker run -it --device /dev/davinci0 ascend-img:latest\n"
            "ls: cannot open directory '/dev/davinci_manager': Permission denied\n"
            "dcmi module initialize failed. ret is -8005\n")
    top = top_finding(tmp_path, text)
    assert top.id == "npu-smi-dcmi-init"
    assert "container lacks the capabilities" in top.cause and "--privileged" in top.fix
    assert top.variant in ("docker", "permission denied", "/dev/davinci")
    assert diagnose((str(tmp_path / "a.log"),)).to_dict()["findings"][0]["variant"] == top.variant


def test_fp16_saturation_printed_as_65504(tmp_path):
    top = top_finding(tmp_path, "step 10 logits max tensor(65504., device='npu:0', dtype=torch.float16)\n")
    assert top.id == "fp16-saturation-65504" and "INF_NAN_MODE_ENABLE" in top.fix
    # 65504 inside a longer number is not it
    q = tmp_path / "c.log"
    q.write_text("pid 165504 started\nvalue 655040.0\n", encoding="utf-8")
    assert not [f for f in diagnose((str(q),)).findings if f.id == "fp16-saturation-65504"]


def test_vllm_preemption_names_the_kv_cache_knobs(tmp_path):
    text = ("INFO 05-09 00:40:00 api_server.py:1 vLLM API server version 0.9.1\n"
            "WARNING 05-09 00:49:33 scheduler.py:1057 Sequence group 7 is preempted by PreemptionMode.RECOMPUTE mode because "
            "there is not enough KV cache space. total_cumulative_preemption_cnt=51\n")
    top = top_finding(tmp_path, text)
    assert top.id == "vllm-preemption" and "--max-num-seqs" in top.fix


def test_an_integer_65504_is_not_saturation(tmp_path):
    p = tmp_path / "d.log"
    p.write_text("2026-05-01 10:00:00,000 INFO step 65504 loss 0.123\n[rank0]: port 65504 in use? no\n", encoding="utf-8")
    assert not [f for f in diagnose((str(p),)).findings if f.id == "fp16-saturation-65504"]


def test_vllm_stats_kv_cache_full_with_requests_pending(tmp_path):
    full = ("INFO 05-09 00:50:00 metrics.py:351] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 812.4 "
            "tokens/s, Running: 48 reqs, Swapped: 0 reqs, Pending: 16 reqs, GPU KV cache usage: 99.6%, CPU KV cache usage: 0.0%.\n")
    top = top_finding(tmp_path, full)
    assert top.id == "vllm-kv-cache-saturated" and top.details["usage"] == "99.6" and top.details["pending"] == "16"
    calm = full.replace("Pending: 16", "Pending: 0").replace("99.6%", "41.2%")
    p = tmp_path / "calm.log"
    p.write_text(calm, encoding="utf-8")
    assert not [f for f in diagnose((str(p),)).findings if f.id == "vllm-kv-cache-saturated"]
