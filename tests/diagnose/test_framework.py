"""Framework awareness: the framework and its version read from the log, and fixes that depend on it
(logs composed from the frameworks' documented banners and messages; made-up paths)."""

from __future__ import annotations

import pytest

from ascendify.diagnose import frameworks
from ascendify.diagnose.context import Context
from ascendify.diagnose.engine import diagnose
from tests.diagnose.diag_util import write_log

OOM = ("RuntimeError: NPU out of memory. Tried to allocate 1.50 GiB (NPU 0; 60.00 GiB total capacity; 40.00 GiB already "
       "allocated; 40.00 GiB current active; 1.10 GiB free; 44.00 GiB reserved in total by PyTorch)")




@pytest.mark.parametrize("line, name, version", [
    ("INFO 03-09 08:00:00 [api_server.py:1042] vLLM API server version 0.9.1", "vllm", "0.9.1"),
    ("$ vllm serve /models/Qwen2.5-7B --tensor-parallel-size 2", "vllm", None),
    ("INFO 05-01 10:00:00 llm_engine.py:232] Initializing a V1 LLM engine (v0.8.5rc1) with config: model='x'", "vllm", "0.8.5rc1"),
    ("python -m sglang.launch_server --model-path /m --device npu", "sglang", None),
    ("lmdeploy serve api_server /models/x --backend pytorch --device ascend", "lmdeploy", None),
    ("[2025-01-01 10:00:00,000] [INFO] DeepSpeed info: version=0.14.4, git-hash=unknown", "deepspeed", "0.14.4"),
    ("llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml", "llamafactory", None),
    ("python pretrain_gpt.py --tensor-model-parallel-size 8 --pipeline-model-parallel-size 1", "megatron", None),
    ("import mindspeed.megatron_adaptor", "mindspeed", None),
    ("[mindie-service] daemon start success", "mindie", None),
])
def test_framework_detected_from_one_line(line, name, version):
    c = Context()
    c.feed(line, "f.log", 1)
    fw = c.values.get("framework")
    assert fw is not None and fw["value"] == name
    assert fw.get("version") == version


def test_more_specific_framework_wins_and_versions_are_kept():
    c = Context()
    for i, line in enumerate(["DeepSpeed info: version=0.14.0", "llamafactory 0.9.1", "vllm_ascend==0.9.1rc1"], 1):
        c.feed(line, "f.log", i)
    fw = c.values["framework"]
    assert fw["value"] == "vllm"  # a serving framework over the training stack it runs in
    assert c.versions()["deepspeed"] == "0.14.0" and c.versions()["vllm-ascend"] == "0.9.1rc1"


def test_vllm_oom_leads_with_memory_utilization(tmp_path):
    text = "INFO 03-09 08:00:00 [api_server.py:1042] vLLM API server version 0.9.1\n" + OOM + "\n"
    rep = diagnose((write_log(tmp_path, text),))
    top = rep.findings[0]
    assert top.family == "memory"
    assert top.fix.startswith("vLLM reserves --gpu-memory-utilization")
    assert "vllm-oom-memory-utilization" in top.settings
    assert rep.to_dict()["summary"]["framework"] == "vllm"


def test_the_same_oom_without_vllm_keeps_the_allocator_reading(tmp_path):
    rep = diagnose((write_log(tmp_path, OOM + "\n"),))
    top = rep.findings[0]
    assert "gpu-memory-utilization" not in top.fix and not top.settings


def test_framework_from_a_traceback_frame(tmp_path):
    text = ("Traceback (most recent call last):\n"
            '  File "/usr/local/lib/python3.10/site-packages/vllm/worker/worker_base.py", line 10, in init\n'
            "RuntimeError: Cannot re-initialize NPU in forked subprocess. To use NPU with multiprocessing, you must use the 'spawn' start method\n")
    rep = diagnose((write_log(tmp_path, "\n" * 3 + text),))
    assert rep.context["framework"]["value"] == "vllm"
    assert "VLLM_WORKER_MULTIPROC_METHOD=spawn" in rep.findings[0].fix


def test_port_in_use_names_hccl_if_base_port(tmp_path):
    text = "RuntimeError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use\n"
    rep = diagnose((write_log(tmp_path, text),))
    assert any("HCCL_IF_BASE_PORT" in f.fix for f in rep.findings)


def test_settings_data_is_well_formed():
    settings = frameworks.load()
    assert len(settings) >= 6
    assert all("https://" in s.source or not s.verified for s in settings)
    with pytest.raises(ValueError):
        frameworks.parse({"setting": [{"id": "x", "framework": ["vllm"], "text": "t", "source": "no url"}]})
