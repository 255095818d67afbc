"""Framework settings and known-issue attachment (issue 21, families 3 and 7), on logs written here in our own words:
SGLang / lmdeploy / Megatron-MindSpeed OOM knobs, an OOM in graph capture (the traceback's frame), a generic OOM line
in MiB naming no thread, a message's own reason not led by a thread that shares only its op name, a specific code's
entry not led by a thread about another code."""

from __future__ import annotations

from tests.diagnose.diag_util import diagnose_text, top_finding


def _oom(unit_free: str = "310.00 MiB free") -> str:
    return ("RuntimeError: NPU out of memory. Tried to allocate 512.00 MiB (NPU 0; 60.96 GiB total capacity; "
            f"59.01 GiB already allocated; {unit_free})\n")


SGLANG_CAPTURE = (
    "[2025-08-14 03:20:11] server_args=ServerArgs(model_path='/data/m', tp_size=4, mem_fraction_static=0.9, device='npu')\n"
    "[2025-08-14 03:22:41 TP0] Capture npu graph begin. This can take up to several minutes. avail mem=1.03 GB\n"
    "[2025-08-14 03:22:49 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 380, in __init__\n'
    "    self.capture()\n" + _oom())


def test_sglang_oom_leads_with_mem_fraction_static_and_graph_capture(tmp_path):
    rep = diagnose_text(tmp_path, SGLANG_CAPTURE)
    assert rep.context["framework"]["value"] == "sglang"
    f = rep.findings[0]
    assert f.id == "npu-oom"
    assert f.fix.startswith("SGLang reserves --mem-fraction-static")
    assert "--cuda-graph-max-bs" in f.fix and "--disable-cuda-graph" in f.fix
    assert "sglang-graph-capture" in f.settings  # the traceback's frame is the graph runner
    assert f.known_issue is None  # a generic OOM line in MiB names no thread (units are no issue's words)


def test_oom_in_mib_gets_no_thread_and_no_sglang_knob_outside_sglang(tmp_path):
    f = top_finding(tmp_path, "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 9, in <module>\n"
                    "    loss.backward()\n" + _oom("20.00 MiB free"))
    assert f.id == "npu-oom"
    assert f.known_issue is None
    assert "mem-fraction-static" not in f.fix and "cache-max-entry-count" not in f.fix


def test_lmdeploy_oom_leads_with_cache_max_entry_count(tmp_path):
    log = ("2025-03-11 16:20:01,331 - lmdeploy - INFO - async_engine.py:261 - input backend=pytorch, "
           "backend_config=PytorchEngineConfig(tp=1, session_len=32768, cache_max_entry_count=0.95, device_type='ascend')\n"
           "2025-03-11 16:21:40,010 - lmdeploy - ERROR - model_agent.py:430 - Task <ModelAgentLoop> failed\n" + _oom())
    rep = diagnose_text(tmp_path, log)
    assert rep.context["framework"]["value"] == "lmdeploy"
    f = rep.findings[0]
    assert f.fix.startswith("lmdeploy gives --cache-max-entry-count")


def test_mindspeed_oom_leads_with_recompute_and_distributed_optimizer(tmp_path):
    log = ("[rank5]:   File \"/workspace/MindSpeed-LLM/mindspeed_llm/training/training.py\", line 510, in train_step\n"
           "[rank5]: " + _oom())
    rep = diagnose_text(tmp_path, log)
    assert rep.context["framework"]["value"] == "mindspeed"
    f = rep.findings[0]
    assert "--recompute-granularity" in f.fix and "--use-distributed-optimizer" in f.fix
    assert f.fix.index("--recompute-granularity") < f.fix.index("The model really needs")


def test_vllm_oom_in_graph_capture_names_enforce_eager_and_capture_sizes(tmp_path):
    log = ("INFO 07-01 14:02:11 [api_server.py:1090] vLLM API server version 0.9.2\n"
           "(VllmWorker rank=1 pid=5561) ERROR 07-01 14:05:02 [multiproc_executor.py:527] Traceback (most recent call last):\n"
           "(VllmWorker rank=1 pid=5561) ERROR 07-01 14:05:02 [multiproc_executor.py:527]   File "
           "\"/w/vllm_ascend/worker/model_runner_v1.py\", line 2101, in capture_model\n"
           "(VllmWorker rank=1 pid=5561) ERROR 07-01 14:05:02 [multiproc_executor.py:527] " + _oom())
    f = top_finding(tmp_path, log)
    assert "vllm-graph-capture-eager" in f.settings
    assert "cudagraph_capture_sizes" in f.fix


MOE_TILING = """\
INFO 12-03 02:10:44 [api_server.py:1090] vLLM API server version 0.11.0rc3
[ERROR] 2025-12-03-02:12:10 (PID:9102, Device:1, RankID:9) ERR01100 OPS call acl api failed
EZ9999: Inner Error!
EZ9999: [PID: 9102] 2025-12-03-02:12:10.331.002 MoeDistributeDispatchV2 tiling failed: HCCL_BUFFSIZE is too SMALL, maxBs = 64, h = 7168, epWorldSize = 16, localMoeExpertNum = 16, NEEDED_HCCL_BUFFSIZE = 1402MB, HCCL_BUFFSIZE=200MB.[FUNC:MoeDistributeDispatchV2TilingFunc][FILE:moe_distribute_dispatch_v2_tiling.cpp][LINE:611]
        TraceBack (most recent call last):
        Tiling failed
(Worker_DP1_EP9 pid=9102) RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the current working operator name is MoeDistributeDispatchV2.
"""


def test_moe_tiling_reason_is_not_led_by_a_thread_sharing_only_the_op_name(tmp_path):
    f = top_finding(tmp_path, MOE_TILING)
    assert f.fix.startswith("MoE dispatch / combine move their all-to-all data through HCCL's per-communicator buffer")
    assert "Expert Parallel" not in f.fix.split("Otherwise:")[0]


BUSY = """\
[W compiler_depend.ts:133] Warning: Device do not support double dtype now, dtype cast repalce with float. (function operator())
EL0005: [PID: 8821] 2025-07-09-10:11:12.001.100 The resources are busy.
        Possible Cause: 1. The resources have been occupied. 2. The device is being reset. 3. Software is not ready.
        TraceBack (most recent call last):
        rtSetDevice execute failed, reason=[device busy][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]
RuntimeError: InitializeDevice:torch_npu/csrc/core/npu/sys_ctrl/npu_sys_ctrl.cpp:198 NPU function error: aclrtSetDevice(device_id_), error code is 507033
"""


def test_specific_code_entry_leads_a_thread_about_another_code(tmp_path):
    f = top_finding(tmp_path, BUSY)
    assert f.id == "cann-EL0005"
    assert f.cause.startswith("The device resources are busy")
    assert f.fix.startswith("Find the other process")


# seed threads (written here) shaped like the ones that led wrongly: a quote that is only the generic OOM message
# in MiB, one that is only an op name, one about another code, and pip's own resolver frame
SEED = [
    {"id": "demo-mm#1", "project": "mindspeed-mm", "url": "https://github.com/example/demo-mm/commit/1", "date": "2026-01-01",
     "title": "LoRA + EP runs out of memory", "quote": ["NPU out of memory. Tried to allocate 258.00 MiB",
                                                      "(NPU 5; 61.28 GiB total capacity; 59.37 GiB already allocated)"],
     "affected": None, "fixed_in": None, "cause": "Frozen expert weights entered the optimizer.",
     "fix": "Use a build with the demo fix.", "framework": "mindspeed", "resolution": "merged-pr"},
    {"id": "demo-va#2", "project": "vllm-ascend", "url": "https://github.com/example/demo-va/issues/2", "date": "2026-01-02",
     "title": "graph mode with EP fails", "quote": ["MoeDistributeDispatchV2"], "affected": None, "fixed_in": None,
     "cause": "Expert parallel with full graph mode fails.", "fix": "Disable Expert Parallel in full graph mode.",
     "framework": "vllm", "resolution": "maintainer"},
    {"id": "demo-case#3", "project": "torch_npu", "url": "https://github.com/example/demo-case/3", "date": "2024-01-03",
     "title": "device init fails", "quote": ["RuntimeError: Initialize:/home/x/code/pytorch/c10/npu/sys_ctrl/npu_sys_ctrl.cpp:44 "
                                            "NPU error, error code is 500000"], "affected": None, "fixed_in": None,
     "cause": "The driver and firmware do not match.", "fix": "Restart the server and install a matching driver and firmware.",
     "framework": "torch_npu", "resolution": "faq"},
    {"id": "demo-lf#4", "project": "llamafactory", "url": "https://github.com/example/demo-lf/issues/4", "date": "2024-10-04",
     "title": "npu extra conflicts", "quote": ["ERROR: Cannot install demo and demo[npu]==0.1 because these package versions "
                                              "have conflicting dependencies."], "affected": None, "fixed_in": None,
     "cause": "The extra pins another torch.", "fix": "Install with --no-deps.", "framework": "llamafactory",
     "resolution": "maintainer"},
]


def test_threads_made_of_generic_words_or_another_code_do_not_lead(tmp_path, use_known_issues):
    use_known_issues(SEED)
    oom = top_finding(tmp_path, "[rank0]:   File \"/w/train.py\", line 88, in <module>\n[rank0]: RuntimeError: NPU out of "
                      "memory. Tried to allocate 1.50 GiB (NPU 0; 29.50 GiB total capacity; 28.10 GiB already allocated; "
                      "20.00 MiB free)\n", "oom.log")
    assert oom.id == "npu-oom" and oom.known_issue is None  # MiB / GiB are no issue's words
    moe = top_finding(tmp_path, MOE_TILING, "moe.log")
    assert moe.fix.startswith("MoE dispatch / combine move")  # the thread shares the op name, not the reason
    busy = top_finding(tmp_path, BUSY, "busy.log")
    assert busy.id == "cann-EL0005" and busy.fix.startswith("Find the other process")  # the thread is about 500000
    pip = top_finding(tmp_path, "ERROR: Cannot install -r r.txt (line 1) and torch==2.5.1 because these package versions "
                      "have conflicting dependencies.\nThe conflict is caused by:\n    The user requested torch==2.5.1\n"
                      "    torchvision 0.21.0 depends on torch==2.6.0\n", "pip.log")
    assert pip.known_issue is None  # pip's frame words only
    # a thread that does share the reason still leads it
    use_known_issues(SEED[:1] + SEED[2:] + [dict(SEED[1], id="demo-va#5", quote=["MoeDistributeDispatchV2 tiling failed: HCCL_BUFFSIZE is too SMALL"],
                           fix="Raise HCCL_BUFFSIZE to what the message needs.")])
    again = top_finding(tmp_path, MOE_TILING, "moe2.log")
    assert again.known_issue is not None and again.known_issue["id"] == "demo-va#5"
