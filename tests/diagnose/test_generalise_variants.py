"""Families of issue 21 on logs worded differently from the records and catalogue examples they rest on (written
here, not copied from any thread): the framework's own knob leads (vLLM's memory headroom, spawn, HCCL ports and
buffers), symptoms without a code (NaN, fp16 saturation, loss-scale collapse), one code with two causes decided by the
other lines (dcmi -8005), a message whose reason is the answer, and a log that paraphrases its known issue."""

from __future__ import annotations

from tests.diagnose.diag_util import diagnose_text, top_finding


def _words(f) -> str:
    return " ".join([f.title, f.cause, f.fix, f.next_step]).lower()


VLLM_OOM = """\
INFO 05-02 11:00:01 [api_server.py:1040] vLLM API server version 0.9.2
INFO 05-02 11:00:01 [cli_args.py:325] non-default args: {'model': '/models/m', 'tensor_parallel_size': 2}
ERROR 05-02 11:03:12 [core.py:586] EngineCore failed to start.
ERROR 05-02 11:03:12 [core.py:586] Traceback (most recent call last):
ERROR 05-02 11:03:12 [core.py:586]   File "/opt/py/site-packages/vllm_ascend/worker/model_runner_v1.py", line 1900, in profile_run
ERROR 05-02 11:03:12 [core.py:586]     hidden = self._dummy_run(n)
ERROR 05-02 11:03:12 [core.py:586] RuntimeError: NPU out of memory. Tried to allocate 1.50 GiB (NPU 1; 60.96 GiB total capacity; 57.10 GiB already allocated; 57.10 GiB current active; 0.91 GiB free; 58.02 GiB reserved in total by PyTorch)
"""


def test_vllm_oom_leads_with_the_memory_utilisation_headroom(tmp_path):
    rep = diagnose_text(tmp_path, VLLM_OOM)
    assert rep.context["framework"]["value"] == "vllm"
    f = rep.findings[0]
    assert f.id == "npu-oom"
    assert f.fix.startswith("vLLM reserves --gpu-memory-utilization")
    assert "--enforce-eager" in f.fix
    # the same OOM without vLLM around it gets no vLLM knob
    plain = top_finding(tmp_path, "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 9, in <module>\n"
                        "    loss.backward()\n" + VLLM_OOM.splitlines()[-1].split("] ", 1)[1] + "\n", "plain.log")
    assert "--gpu-memory-utilization" not in plain.fix


def test_forked_worker_gets_spawn(tmp_path):
    log = ("(VllmWorker rank=1 pid=881) ERROR 05-02 11:00:01 [multiproc_executor.py:470] RuntimeError: Cannot re-initialize "
           "NPU in forked subprocess. To use NPU with multiprocessing, you must use the 'spawn' start method\n")
    assert "VLLM_WORKER_MULTIPROC_METHOD=spawn" in top_finding(tmp_path, log).fix


def test_port_taken_in_other_words_names_hccl_if_base_port(tmp_path):
    log = "[rank3]: RuntimeError: create server socket failed: bind 0.0.0.0:60003 failed, errno 98 (address already in use)\n"
    f = top_finding(tmp_path, log)
    assert "HCCL_IF_BASE_PORT" in f.fix and "MASTER_PORT" in f.fix


def test_moe_dispatch_buffer_names_hccl_buffsize(tmp_path):
    log = "[rank5]:[E ProcessGroupHCCL.cpp] MoeDistributeDispatchV2 failed: the hccl buffer is too small for the dispatch\n"
    assert "HCCL_BUFFSIZE" in top_finding(tmp_path, log).fix


def test_nan_loss_and_collapsing_loss_scale_without_a_code(tmp_path):
    log = "".join(f" iteration {i:8d}/ 50000 | lm loss: {'nan' if i > 120 else '9.2E+00'} | loss scale: {s} | grad norm: nan |\n"
                  for i, s in ((120, "1.0"), (121, "0.5"), (122, "0.25"), (123, "0.125")))
    rep = diagnose_text(tmp_path, log)
    ids = [f.id for f in rep.findings]
    assert ids[0] in ("metric-loss-nonfinite", "metric-loss-scale-collapse", "metric-grad-norm-nonfinite")
    assert "metric-loss-scale-collapse" in ids or "metric-loss-nonfinite" in ids
    assert "loss" in _words(rep.findings[0]) and ("fp32" in _words(rep.findings[0]) or "scaler" in _words(rep.findings[0]))


def test_fp16_saturation_printed_as_65504(tmp_path):
    log = ("max abs of attn_out on npu: 65504.0 (cpu reference: 71203.5)\n"
           "hidden states after layer 12 contain 65504.0 values, output differs from GPU\n")
    f = top_finding(tmp_path, log)
    assert f.id == "fp16-saturation-65504"
    assert "INF_NAN_MODE_ENABLE" in f.cause + f.fix


DCMI = "root@node:/# npu-smi info\ndcmi module initialize failed. ret is -8005\n"


def test_dcmi_8005_in_a_container_without_capabilities(tmp_path):
    log = DCMI + ("crw------- 1 nobody nogroup 236, 0 Jan  1 00:00 /dev/davinci0\n"
                  "container started without --privileged; capabilities dropped\n")
    f = top_finding(tmp_path, log)
    assert f.variant and "--privileged" in f.fix and "held by another" not in f.title


def test_dcmi_8005_with_the_device_taken_by_another_job(tmp_path):
    log = DCMI + "another container (train-job-2) is already using the card: process 4412 holds /dev/davinci0\n"
    f = top_finding(tmp_path, log)
    assert f.id == "npu-smi-dcmi-init"
    assert "held by another process" in f.title
    assert "stop the process or container that holds it" in f.fix and "--privileged" not in f.fix


def test_dcmi_8005_with_the_busy_code(tmp_path):
    log = DCMI + "EL0005: The resources are busy.\n"
    assert "held by another process" in top_finding(tmp_path, log).title


# ---------------------------------------------------------------- packaging and framework families (issue 21, 4 and 3)

def test_uv_says_there_is_no_version_of_an_ascend_package(tmp_path):
    log = ("$ uv pip install torch-npu==2.6.0rc9\n"
           "  x No solution found when resolving dependencies:\n"
           "  `-> Because there is no version of torch-npu==2.6.0rc9 and you require torch-npu==2.6.0rc9, we can conclude "
           "that your requirements are unsatisfiable.\n")
    f = top_finding(tmp_path, log)
    assert f.id == "pip-no-matching-distribution" and f.key == "torch-npu==2.6.0rc9"
    assert "--extra-index-url" in f.fix and "mirrors.huaweicloud.com" in f.fix


def test_cmake_without_ascendc_kernel_cmake_points_at_tikcpp(tmp_path):
    log = ("-- Build type: Release\nCMake Error at cmake/npu.cmake:12 (message):\n"
           "  ascendc_kernel_cmake does not exist, please check cann package.\n-- Configuring incomplete, errors occurred!\n")
    f = top_finding(tmp_path, log)
    assert f.id == "ascendc-cmake-dir-missing"
    assert "tikcpp" in f.cause and "ASCENDC_CMAKE_DIR" in f.fix
    # a build that merely mentions the folder is not this failure
    ok = diagnose_text(tmp_path, "-- Using ASCENDC_CMAKE_DIR=/opt/cann/aarch64-linux/tikcpp/ascendc_kernel_cmake\n", "ok.log")
    assert all(x.id != "ascendc-cmake-dir-missing" for x in ok.findings)


def test_missing_torchnpugen_means_an_older_torch_npu(tmp_path):
    log = ("+ python -m torchnpugen.gen_backend_stubs --out build/gen\n"
           "Traceback (most recent call last):\n  File \"/srv/ops/setup.py\", line 7, in <module>\n"
           "    from torchnpugen.utils import PathManager\nModuleNotFoundError: No module named 'torchnpugen'\n")
    f = top_finding(tmp_path, log)
    assert f.id == "torch-npu-codegen-missing"
    assert "torch_npu" in f.cause and "Upgrade torch_npu" in f.fix


def test_ascend_transfer_engine_failure_names_the_store_url(tmp_path):
    log = ("[2026-02-01 10:00:00 TP0] Prefill bootstrap server started on 0.0.0.0:8998\n"
           "[2026-02-01 10:00:03 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
           "  File \"/opt/sglang/python/sglang/srt/disaggregation/ascend/conn.py\", line 40, in init_engine\n"
           "RuntimeError: Ascend Transfer Engine initialization failed.\n")
    f = top_finding(tmp_path, log)
    assert f.id == "ascend-transfer-engine-init"
    assert "ASCEND_MF_STORE_URL" in f.cause and "export ASCEND_MF_STORE_URL=tcp://" in f.fix


# ---------------------------------------------------------------- one-line Python messages of mismatched packages

def test_unexpected_keyword_is_a_plugin_framework_version_mismatch(tmp_path):
    f = top_finding(tmp_path, "TypeError: NPUModelRunner.execute_model() got an unexpected keyword argument 'scheduler_hint'\n")
    assert f.id == "python-call-signature-mismatch" and f.key == "scheduler_hint"
    assert "version mismatch" in f.cause and "upgrade vllm-ascend to the release matching the installed vLLM" in f.fix


def test_missing_required_arguments_and_a_binding_that_rejects_a_keyword(tmp_path):
    f = top_finding(tmp_path, "TypeError: AscendSampler.forward() missing 3 required positional arguments: 'a', 'b' and 'c'\n")
    assert f.id == "python-call-signature-mismatch" and not f.key
    g = top_finding(tmp_path, "Unknown keyword argument 'beta_scale' for operator npu_fused_gate\n", "b.log")
    assert g.id == "python-call-signature-mismatch" and g.key == "beta_scale"


def test_a_module_of_a_framework_without_the_name_split_over_two_lines(tmp_path):
    log = "  AttributeError: module 'vllm.distributed.parallel_state'\n  has no attribute 'get_dcp_group'\n"
    f = top_finding(tmp_path, log)
    assert f.id == "python-module-attribute-missing" and f.key == "vllm.distributed.parallel_state"
    assert "version mismatch" in f.cause
    # torch_npu's own missing attributes keep their entry
    assert top_finding(tmp_path, "AttributeError: module 'torch_npu' has no attribute 'npu_geglu'\n", "n.log").id \
        == "torch-npu-missing-attribute"


def test_no_kernel_for_quantized_tensors_on_the_device(tmp_path):
    log = "NotImplementedError: Could not run 'aten::reshape' with arguments from the 'QuantizedPrivateUse1' backend.\n"
    f = top_finding(tmp_path, log)
    assert f.id == "aten-op-no-kernel-for-backend" and f.key == "aten::reshape"
    assert "quantized" in f.cause and "dequantize" in f.fix


def test_mte_address_out_of_range_is_an_out_of_bounds_kernel_access(tmp_path):
    f = top_finding(tmp_path, "[ERROR] kernel add_tail_kernel: the DDR address of the MTE instruction is out of range\n")
    assert f.id == "mte-address-out-of-range"
    assert "out-of-bounds" in f.cause and "mask" in f.fix and "triton-ascend" in f.fix


def test_acl_code_after_error_code_without_is(tmp_path):
    f = top_finding(tmp_path, "RuntimeError: aclrtMemcpyAsync failed, error code 100000\n")
    assert f.id == "acl-100000"
    assert "null" in f.cause and "torch.zeros" in f.fix  # the memcpy reading leads


def test_divisibility_and_visible_device_reasons_in_plain_words(tmp_path):
    f = top_finding(tmp_path, "ValueError: Total number of attention heads (40) must be divisible by tensor parallel size (6).\n")
    assert "exact multiple" in f.cause and "divisor" in f.fix
    g = top_finding(tmp_path, "EE1001: [PID: 9] 2026-01-01-00:00:00.000.000 The argument is invalid.Reason: Set visible device "
                              "failed, invalid device=6, input visible devices:0,1\n", "v.log")
    assert "ASCEND_RT_VISIBLE_DEVICES" in g.cause and "renumbered from 0" in g.cause


def test_reason_text_without_the_inner_code_prefix(tmp_path):
    from ascendify.diagnose import reason
    line = "(EngineCore pid=7) EZ9999[PID: 7] 2026-01-01-00:00:00.000.000 (EZ9999):  the window is too SMALL for 8 experts"
    assert reason.extract(line) == "the window is too SMALL for 8 experts"


def test_graph_mode_that_does_not_support_the_model_leads_with_eager(tmp_path):
    f = top_finding(tmp_path, "NotImplementedError: aclgraph does not support sliding-window models yet; use eager mode\n")
    assert "not supported in the framework's graph mode" in f.cause
    assert f.fix.startswith("Run in eager mode (--enforce-eager")


def test_drvretcode_62_is_not_the_out_of_memory_code_6(tmp_path):
    log = ("[ERROR] RUNTIME(9,python3):2026-04-02-11:39:56.553.432 [npu_driver_mem.cc:1754]9 MemGetInfo:[drv api] "
           "halMemGetInfo failed: device_id=0, drvRetCode=62!\n")
    assert all(f.id != "cann-oom" for f in diagnose_text(tmp_path, log).findings)
    oom = "[ERROR] DRV(9,python3):2026-04-02-11:39:56.553.432 halMemAlloc failed: drvRetCode=6\n"
    assert diagnose_text(tmp_path, oom, "oom.log").findings[0].id == "cann-oom"


def test_an_explicit_reason_field_leads_the_block(tmp_path):
    log = ("RuntimeError: initDevice:Module.cpp:207 NPU function error: aclrtGetDeviceInfo(deviceid, ATTR, &v), error code is 507899\n"
           "EE9999: Inner Error!\n"
           "EE9999[PID: 7] 2026-04-01-18:09:19.810.555 (EE9999): rtsDeviceGetInfo execution failed, reason=the device "
           "attribute query is not supported on this chip[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]\n")
    f = top_finding(tmp_path, log)
    assert f.reason == "the device attribute query is not supported on this chip"
    assert "the device attribute query is not supported on this chip" in f.title


def test_engine_rpc_timeout_points_at_hung_workers_and_shared_memory(tmp_path):
    log = "(EngineCore pid=31) ERROR 01-02 03:04:05 [core.py:1] TimeoutError: RPC call to execute_model timed out.\n"
    f = top_finding(tmp_path, log)
    assert f.id == "serving-worker-rpc-timeout" and f.key == "execute_model"
    assert "/dev/shm" in f.cause and "--shm-size" in f.fix and "VLLM_RPC_TIMEOUT" in f.fix


def test_batch_of_one_against_a_long_length_reads_as_a_swapped_layout(tmp_path):
    from ascendify.diagnose import reason
    line = "AclNN_Parameter_Error(EZ1001): The batch size of key_rope should match query's batch size, but got 2048 and 1"
    assert reason.extract(line).startswith("The batch size of key_rope should match")
    f = top_finding(tmp_path, line + "\n")
    assert "batch and sequence swapped" in f.cause and "input_layout" in f.fix
    # a mismatch of two real batch sizes is not read as a layout swap
    g = top_finding(tmp_path, "AclNN_Parameter_Error(EZ1001): The batch size of k should match q, but got 8 and 16\n", "g.log")
    assert "batch and sequence swapped" not in g.cause


def test_a_model_config_without_a_field_is_a_transformers_or_config_version_question(tmp_path):
    f = top_finding(tmp_path, "AttributeError: 'MistralConfig' object has no attribute 'sliding_window_pattern'\n")
    assert f.id == "model-config-field-missing" and f.key == "sliding_window_pattern"
    assert "has no field sliding_window_pattern" in f.cause and "{cls}" not in f.cause
    assert f.fix.startswith("Upgrade transformers")
    # an ordinary object's missing attribute is not read as a config question
    g = top_finding(tmp_path, "AttributeError: 'Trainer' object has no attribute 'sliding_window_pattern'\n", "t.log")
    assert g.id != "model-config-field-missing"
