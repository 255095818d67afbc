"""Message families of the diagnose catalogue: each family's entries must match
wording variants (case, spacing, quoting, word order seen in public logs), lines
cut off mid-message, and leave benign look-alikes alone.  All lines are our own,
written in the shape of real logs (names, pids, paths made up)."""

from __future__ import annotations

import pytest

from ascendify.diagnose.engine import diagnose
from ascendify.diagnose.signatures import Matcher, load

KB = load()
M = Matcher(KB)


def first(line: str):
    """(id, key) of the first signature hit of ``line``, or None."""
    assert KB.trigger.search(line.encode("utf-8")) or M.match_line(line) is None, f"trigger misses {line!r}"
    lm = M.match_line(line)
    if not lm or not lm.signatures:
        return None
    sig, groups = lm.signatures[0]
    return sig.id, (groups.get(sig.key) if sig.key else None)


def ids(line: str) -> list:
    lm = M.match_line(line)
    return [s.id for s, _ in lm.signatures] if lm else []


# (line, first id, key) — variants of each family, truncated lines marked "cut"
POSITIVE = {
    "chip / soc_version": [
        ("[ERROR] the socversion Ascend910B1 of bin package does not match the current device socverison Ascend310P3. Please modify", "soc-version-mismatch", "Ascend310P3"),
        ("[ERROR] The SocVersion Ascend910B2 of the kernel package does not match the device soc version Ascend910B4", "soc-version-mismatch", "Ascend910B2"),
        ("RuntimeError: soc_version Ascend310P3 is not supported by this op package", "soc-version-mismatch", "Ascend310P3"),
        ("  SOC_VERSION ascend310b1 does not support, the support list is ascend910b1;ascend910b2", "soc-version-mismatch", "ascend310b1"),
        ("EE1001: [PID: 9] 2026-01-01-00:00:00.000.000 The argument is invalid.Reason: ModelCheckCompatibility failed, supported socVersion=Ascend310P3, but the model socVersion=Ascend910B3", "soc-version-mismatch", "Ascend310P3"),
        ("RuntimeError: Unsupported SOC Version: Ascend310B1", "soc-version-mismatch", "Ascend310B1"),
        ("RuntimeError: Can not support soc_version: 222.", "soc-version-unsupported", None),
        ("RuntimeError: Can not support soc_vers", "soc-version-unsupported", None),  # cut
        ("ValueError: Unsupported soc_version: AscendSocVersion.UNDEF", "soc-version-unsupported", None),  # cut
        ("E10001: [PID: 9] 2026-01-01-00:00:00.000.000 Value [Ascend999] for parameter [--soc_version] is invalid. Reason: the soc version is not supported", "soc-version-unsupported", None),
        ("bishengir-compile: for the --target option: Cannot find option named 'Ascend910_9391'!", "triton-target-unsupported", "Ascend910_9391"),
        ("(Worker pid=7) ERROR 01-02 03:04:05 [core.py:9] bishengir-compile: for the --target option: Cannot find option named 'Ascend310P", "triton-target-unsupported", "Ascend310P"),  # cut
        ("EZ1001: [PID: 9] 2026-01-01-00:00:00.000.000 Get regInfo failed, The binary_info_config.json of socVersion [ascend310p] does not support opType [GroupedMatmul].", "op-not-on-soc", "GroupedMatmul"),
    ],
    "shared libraries": [
        ("ImportError: libhccl.so: cannot open shared object file: No such file or directory", "missing-library", "libhccl.so"),
        ("OSError: /x/lib/libacl_op_compiler.so: cannot open shared object file: No such file", "missing-library", "libacl_op_compiler.so"),
        ("ImportError: libatb.so: cannot open shared object fil", None, None),  # cut before "file": no `any` literal left
        ("ImportError: libopapi.so: cannot open shared object file: No such f", "missing-library", "libopapi.so"),  # cut
        ("ImportError: libascend_hal.so: cannot open shared object file: No such file or directory", "driver-not-mounted", "libascend_hal.so"),
        ("OSError: /usr/local/Ascend/driver/lib64/driver/libdrvdsmi_host.so: cannot open shared object file: No such file", "driver-not-mounted", "libdrvdsmi_host.so"),
        ("OSError: libtorch_npu.so: cannot open shared object file: No such file or directory", "shared-library-missing", "libtorch_npu.so"),
        ("ImportError: _C.cpython-311-aarch64-linux-gnu.so: cannot open shared object file: No such file", "shared-library-missing", "_C.cpython-311-aarch64-linux-gnu.so"),
        ("ImportError: /usr/lib64/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by /opt/py/site-packages/torch/lib/libtorch_python.so)", "glibcxx-version-not-found", "GLIBCXX_3.4.32"),
        ("OSError: /lib64/libc.so.6: version `GLIBC_2.34' not found (required by /opt/py/x.so)", "glibcxx-version-not-found", "GLIBC_2.34"),
        ("ImportError: /lib/libstdc++.so.6: version `CXXABI_1.3.13' not fou", None, None),  # cut before "not found": nothing to say
        ("ImportError: /opt/conda/lib/libgomp.so.1: cannot allocate memory in static TLS block", "libgomp-static-tls", "libgomp.so.1"),
        ("OSError: /opt/py/site-packages/torch/lib/libgomp-a34b3233.so.1: cannot allocate memory in static TL", None, None),  # cut inside the anchor
        ("OSError: /opt/py/site-packages/torch/lib/libgomp-a34b3233.so.1: cannot allocate memory in static TLS bl", "libgomp-static-tls", "libgomp-a34b3233.so.1"),  # cut
        ("ImportError: /opt/py/site-packages/torch_npu/lib/libtorch_npu.so: undefined symbol: _ZN3c104impl3cow11cow_deleterEPv", "torch-torch-npu-mismatch", "_ZN3c104impl3cow11cow_deleterEPv"),
        ("OSError: /opt/py/site-packages/apex_npu/_C.so: undefined symbol: _Z9npu_thingv", "undefined-symbol", "_Z9npu_thingv"),
        ("dlopen /usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1/lib/libatb.so failed", "shared-library-load-failed", "libatb.so"),
        ("[ERROR] GE(7,main):2026-01-01-00:00:00.000.000 [Invoke][DlOpen] failed. path = /opt/opp/libops_host_cpu.so, error = /opt/opp/libops_host_cpu.so: undefined symbol: _ZN2ge3FooEv", "undefined-symbol", "_ZN2ge3FooEv"),
    ],
    "python modules": [
        ("ModuleNotFoundError: No module named 'torch_npu'", "torch-npu-not-installed", None),
        ("/usr/bin/python3: No module named torch_npu", "torch-npu-not-installed", None),
        ('ModuleNotFoundError: No module named "torch_npu"', "torch-npu-not-installed", None),
        ("ModuleNotFoundError: No module named 'torch_npu._C'", "torch-npu-c-missing", None),
        ("ModuleNotFoundError: No module named 'tbe.common.utils'", "cann-env-not-sourced", None),
        ("ModuleNotFoundError: No module named 'te'", "cann-env-not-sourced", None),
        ("ModuleNotFoundError: No module named 'te_fusion'", "cann-env-not-sourced", None),
        ("ModuleNotFoundError: No module named 'sympy'", "cann-python-module-missing", "sympy"),
        ("ModuleNotFoundError: No module named 'attr'", "cann-python-module-missing", "attr"),
        ("[ERROR] TBE(7,python3):2026-01-01-00:00:00.000.000 import te failed: No module named 'cloudpickle'", "cann-python-module-missing", "cloudpickle"),
        ("ModuleNotFoundError: No module named 'tornad", None, None),  # cut inside the name: only the generic entry
        ("2026-01-01 00:00:00,000 - lmdeploy - ERROR - base.py:53 - ModuleNotFoundError: No module named 'dlinfer'", "npu-framework-module-missing", "dlinfer"),
        ("ModuleNotFoundError: No module named 'vllm_ascend.patch'", "npu-framework-module-missing", "vllm_ascend"),
        ("ModuleNotFoundError: No module named 'mindspeed'", "npu-framework-module-missing", "mindspeed"),
        ("ModuleNotFoundError: No module named 'flash_attn'", "cuda-only-package", "flash_attn"),
        ('ModuleNotFoundError: No module named "apex"', "cuda-only-package", "apex"),
        ("ModuleNotFoundError: No module named 'peft'", "python-module-missing", "peft"),
        ("ModuleNotFoundError: No module named 'transformers.models.qwen3", "python-submodule-missing", "transformers.models.qwen3"),  # cut
        ("ModuleNotFoundError: No module named 'vllm.model_executor.layers.fused_moe.moe_align", "python-submodule-missing", "vllm.model_executor.layers.fused_moe.moe_align"),  # cut
        ("ImportError: cannot import name 'SamplingParams' from 'vllm' (unknown location)", "python-import-shadowed", "vllm"),
        ("ImportError: cannot import name 'cdiv' from 'vllm.utils' (/opt/py/vllm/utils/__init__.py)", "python-cannot-import-name", "cdiv"),
        ("ImportError: cannot import name 'npu_fast_gelu' from 'torch_npu' (/opt/py/torch_npu/__init__.py)", "python-cannot-import-name", "npu_fast_gelu"),
        ("ImportError: cannot import name 'is_torch_npu_avail", None, None),  # cut inside the name: nothing
        ("WARNING 01-02 03:04:05 [utils.py:1] optional: No module named 'xformers_ops'", "python-module-missing-warning", "xformers_ops"),
        ("WARNING 01-02 03:04:05 [_custom_ops.py:20] Failed to import from vllm._C with ModuleNotFoundError(\"No module named 'vllm._C'\")", "vllm-c-extension-benign", None),
        ("WARNING 01-02 03:04:05 [_custom_ops.py:21] Failed to import from vllm._C with ImportError('/opt/py/vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi')", "vllm-c-extension-benign", None),
    ],
    "device busy": [
        ("dcmi module initialize failed. ret is -8005", "npu-smi-dcmi-init", "-8005"),
        ("dcmi module initialize failed. ret is -8020", "npu-smi-dcmi-init", "-8020"),
        ("open /dev/davinci5 failed: Device or resource busy", "npu-device-busy", None),
        ("[ERROR] DRV(7,python3):2026-01-01-00:00:00.000.000 open device 3 failed, resource busy", "npu-device-busy", None),
        ("[ERROR] HCCP(7,python3):2026-01-01-00:00:00.000.000 the device is occupied, check whether the last training process is still running", "npu-device-busy", None),
        ("[ERROR] RUNTIME(7,python3):2026-01-01-00:00:00.000.000 the resources are bu", None, None),  # cut inside "busy"
        ("Resource_Busy(EL0005): The resources are busy.", "cann-EL0005", None),
    ],
    "AI Core / Vector / CPU exceptions": [
        ("[ERROR] RUNTIME(7,python3):2026-01-01-00:00:00.000.000 [task.cc:1]8 Aicore kernel execute failed, ret=507015, aicore exception fault kernel_name=Add_8c1f", "aicore-exception", "Add_8c1f"),
        ("EZ9999: [PID: 7] 2026-01-01-00:00:00.000.000 The error from device(chipId:0, dieId:0), serial number is 2, there is an aicore error exception, core id is 0", "aicore-exception", None),
        ("[ERROR] AI Core exception occurred, kernel_name=MatMulV2_3", "aicore-exception", "MatMulV2_3"),
        ("AICORE ERROR exception on core 7", "aicore-exception", None),
        ("EZ9999: [PID: 7] 2026-01-01-00:00:00.000.000 The error from device(chipId:1, dieId:0), serial number is 3, there is an aivec error exception, core id is 4", "aivec-exception", None),
        ("[ERROR] RUNTIME(7,python3):2026-01-01-00:00:00.000.000 there is an aivector error exception, core id is 12", "aivec-exception", None),
        ("AIV exception on core 3, pc start: 0x12", "aivec-exception", None),
        ("there is a vector core exception, core id is 9", "aivec-exception", None),
        ("[ERROR] AI Vector core error, kernel Gather", "aivec-exception", None),
        ("EZ9999: [PID: 7] 2026-01-01-00:00:00.000.000 Kernel task happen error, retCode=0x2a, [aicpu exception].", "aicpu-exception", None),
        ("AICPU exception on kernel ScatterNd", "aicpu-exception", None),
        ("[ERROR] AI CPU error in StatelessRandomNormal", "aicpu-exception", None),
        ("RuntimeError: NPU function error: aclrtSynchronizeStreamWithTimeout, error code is 507015", "aicore-exception", None),
        ("       The error from device(chipId:5, dieId:0), serial number is 65, there is an exception of aivec error, core id is 44", "aivec-exception", None),
        ("       AIV Kernel happen error, retCode=0x31.[FUNC:GetError][FILE:stream.cc][LINE:1183]", "aivec-exception", None),
        ("       AIC Kernel happen error, retCode=0x2f.[FUNC:GetError][FILE:stream.cc][LINE:1183]", "aicore-exception", None),
        ("       Aicore kernel execute failed, device_id=0, stream_id=2, task_id=1167, flip_num=0, fault kernel_name=TopKTopP_fp32_0,", "aicore-exception", "TopKTopP_fp32_0"),
        ("       Kernel task happen error, retCode=0x31, [vector core exce", "aivec-exception", None),  # cut
        ("[Error]: The vector core execution is abnormal.", "aivec-exception", None),
        ("E19010:No parser is registered for op [Conv_3, optype [ai.onnx::13::MatMulInteger]].", "atc-unsupported-op", "Conv_3"),
        ("EE9999[PID: 7] The error from device(chipId:1, dieId:0), serial number is 6. there is a fftsplus sdma error, sdma channel is 2,", "sdma-copy-error", None),
    ],
    "truncated prefixes": [
        ("EZ1001: [PID: 9] 2026-01-01-00:00:00.000.000 Tensor self not implemented for DT_UINT64, should be in dtype su", "dtype-not-in-support-list", "DT_UINT64"),
        ("EZ1001: [PID: 9] 2026-01-01-00:00:00.000.000 Tensor self not implemented for DT_BFLOAT16, should be in dty", "dtype-bf16-not-implemented", None),
        ("AssertionError: Torch not compiled with CUDA enab", "cuda-not-compiled", None),
        ("[Rank 1] Watchdog caught collective operation tim", "hccl-watchdog-timeout", None),
        ("[ERROR] Some HCCL operations have failed or tim", "hccl-watchdog-timeout", None),
        ("RuntimeError: Two accelerators cannot be used at the sa", "two-accelerators", None),
        ("RuntimeError: NPU out of memory. Tried to allocate more than 1EB mem", "npu-oom-rejected", None),
        ("RuntimeError: The Inner error is reported as abo", "async-inner-error", None),
        ("[ERROR] HCCL(7,python3):2026-01-01-00:00:00.000.000 [topoinfo_exchange_server.cc:1] topo exchange server get socket time", "hccl-topo-exchange-timeout", None),
        ("INFO 01-02 03:04:05 __init__.py:187] No platform detected, vLLM is running on UnspecifiedPlat", None, None),  # cut in the anchor
        ("INFO 01-02 03:04:05 __init__.py:187] No platform detected, vLLM is running on UnspecifiedPlatform", "vllm-no-platform", None),
    ],
}

CASES = [(fam, line, sid, key) for fam, rows in POSITIVE.items() for line, sid, key in rows]


@pytest.mark.parametrize("family,line,sid,key", CASES, ids=[f"{c[0]}:{i}" for i, c in enumerate(CASES)])
def test_family_variant(family, line, sid, key):
    got = first(line)
    if sid is None:
        assert got is None or got[0] in {"python-module-missing", "python-module-missing-warning"}, got
        return
    assert got is not None and got[0] == sid, (line, got, ids(line))
    if key is not None:
        assert got[1] == key


NEGATIVE = [
    "[INFO] soc_version=Ascend910B3 detected, 8 devices",
    "atc --model=x.onnx --framework=5 --output=x --soc_version=Ascend310P3",
    "INFO: get soc version success: Ascend910B1",
    "the port 8000 is occupied by the dashboard",
    "step 10: the AI Core utilisation is 80%, vector core 12%",
    "INFO: aicore frequency 1800 MHz, AICPU count 6",
    "[INFO] dlopen /usr/local/Ascend/driver/lib64/libascend_hal.so success",
    "INFO loaded libhccl.so from /usr/local/Ascend/ascend-toolkit/latest/lib64",
    "checking GLIBCXX_3.4.30 ... found",
    "Found 8 NPUs, all resources ready",
    "Setting ds_accelerator to npu (auto detect)",
    "[W compiler_depend.ts:1] Warning: Device do not support double dtype now, dtype cast repalce with float.",
]


@pytest.mark.parametrize("line", NEGATIVE)
def test_benign_look_alikes_match_no_family_entry(line):
    lm = M.match_line(line)
    errors = [s.id for s, _ in lm.signatures if s.severity == "error"] if lm else []
    assert errors == [] and (lm is None or not (lm.cann_codes or lm.acl_codes or lm.err_codes)), (line, ids(line))


def test_generic_module_entries_yield_to_specific_ones():
    # every specific `No module named` entry supersedes the generic fallback on its line
    for line in ("ModuleNotFoundError: No module named 'torch_npu'", "ModuleNotFoundError: No module named 'sympy'",
                 "ModuleNotFoundError: No module named 'dlinfer'", "ModuleNotFoundError: No module named 'triton'",
                 "ModuleNotFoundError: No module named 'tbe'"):
        got = ids(line)
        assert "python-module-missing" not in got and "python-module-missing-warning" not in got, (line, got)
    assert ids("ModuleNotFoundError: No module named 'peft'") == ["python-module-missing"]
    # a logger WARNING line is a warning, not an error
    assert ids("WARNING 01-02 03:04:05 [x.py:1] No module named 'peft'") == ["python-module-missing-warning"]


def test_chip_is_named_in_the_fix(tmp_path):
    p = tmp_path / "x.log"
    p.write_text("[ERROR] the socversion Ascend910B1 of bin package does not match the current device socverison Ascend310P3.\n")
    f = diagnose((str(p),), kb=KB).findings[0]
    assert f.id == "soc-version-mismatch" and f.key == "Ascend310P3"
    assert "--soc_version=Ascend310P3" in f.fix and "kernels" in f.fix


def test_benign_line_explains_the_codes_it_quotes():
    line = ("[ERROR] 2026-01-01-00:00:00 (PID:7, Device:0, RankID:0) ERR00006 EE1001 Get a block from the existing pool failed. "
            "Try to free cached blocks and reallocate. This error log can be ignored.")
    lm = M.match_line(line)
    assert [s.id for s, _ in lm.signatures] == ["benign-ignorable-log"]
    assert lm.cann_codes == [] and lm.err_codes == [] and lm.acl_codes == []


def _diag(tmp_path, lines: list):
    p = tmp_path / "x.log"
    p.write_text("\n".join(lines) + "\n")
    return diagnose((str(p),), kb=KB).findings


OOM = ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.00 GiB total capacity; 58.00 GiB already allocated; "
       "58.00 GiB current active; 0.50 GiB free; 59.00 GiB reserved in total by PyTorch)")


def test_benign_noise_is_not_the_root_cause(tmp_path):
    found = _diag(tmp_path, [
        "[W compiler_depend.ts:12] Warning: Get a block from the existing pool failed. Try to free cached blocks and reallocate. This error log can be ignored.",
        "WARNING 01-02 03:04:05 [_custom_ops.py:20] Failed to import from vllm._C with ModuleNotFoundError(\"No module named 'vllm._C'\")",
        "/opt/py/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: libc10_cuda.so: cannot open shared object file: No such file or directory",
        "step 10 loss 2.31",
        OOM,
    ])
    assert found[0].id == "npu-oom"
    benign = {f.id: f for f in found[1:]}
    assert {"benign-ignorable-log", "vllm-c-extension-benign", "torchvision-image-extension-benign"} <= set(benign)
    assert all(f.severity == "warning" and f.confidence < 0.5 for f in benign.values())


def test_benign_noise_alone_is_a_low_confidence_note(tmp_path):
    found = _diag(tmp_path, ["[W compiler_depend.ts:952] Warning: Process group work ALLREDUCE, seq_num 3 dispatch success. This warning log can be ignored."])
    assert [f.id for f in found] == ["benign-ignorable-log"]
    assert found[0].severity == "warning" and found[0].confidence < 0.5


def test_specific_message_beats_code_entry_on_its_line():
    line = "RuntimeError: call aclnnIndexPut failed, detail:EZ1001: [PID: 7] 2026-01-01-00:00:00.000.000 Tensor self not implemented for DT_UINT64, should be in dtype support list [DT_FLOAT]."
    assert ids(line)[0] == "dtype-not-in-support-list" and "cann-EZ1001" not in ids(line)
    line = "EZ9999: [PID: 7] 2026-01-01-00:00:00.000.000 The error from device(chipId:1, dieId:0), serial number is 3, there is an aivec error exception"
    assert ids(line) == ["aivec-exception"]


def test_optional_imports_logged_as_warning_or_info_are_warnings():
    for line in ("WARNING 01-02 03:04:05 [utils.py:1] flash attention off: No module named 'flash_attn'",
                 "INFO 01-02 03:04:05 [importing.py:17] No module named 'triton', using the dummy decorators",
                 "[W compiler_depend.ts:1] Warning: No module named 'einops'"):
        lm = M.match_line(line)
        assert [(s.id, s.severity) for s, _ in lm.signatures] == [("python-module-missing-warning", "warning")], line


@pytest.mark.parametrize("line,sid,key", [
    ("EZ3002: [PID: 7] 2026-01-01-00:00:00.000.000 Optype [TransData] of Ops kernel [AIcoreEngine] is unsupported. Reason: [tbe-custom]:op type TransData is not found in this op store.", "cann-EZ3002", None),
    ("ERROR 01-02 03:04:05 [engine.py:1] Optype [TransData] of Ops kernel [AIcoreEngine] is unsupported. Reason: [tbe-custom]:op type TransData is not found in this op store.", "op-not-in-op-store", "TransData"),
    ("ERROR 01-02 03:04:05 [engine.py:1] [tbe-custom]:op type Identity is not found in this op st", "op-not-in-op-store", "Identity"),  # cut
    ("RuntimeError: call aclnnSwiGlu failed, detail:EZ1001: [PID: 7] 2026-01-01-00:00:00.000.000 Get path and read binary_info_config.json failed, please check if the opp_kernel package is instal", "kernels-package-missing", None),
    ("[ERROR] Ascend opp_kernels is not installed", "kernels-package-missing", None),
])
def test_op_without_kernel_for_this_chip(line, sid, key):
    got = first(line)
    if sid is None:
        assert got is None
        return
    assert got == (sid, key), (got, ids(line))
    assert "cann-EZ1001" not in ids(line) and ids(line).count(sid) == 1


def test_hccl_result_code_is_a_wrapper_of_the_e_code_in_its_block(tmp_path):
    found = _diag(tmp_path, [
        "RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:102 HCCL function error: "
        "hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 7",
        "[ERROR] 2026-01-01-00:00:00 (PID:7, Device:0, RankID:2) ERR02200 DIST call hccl api failed.",
        "EJ0001: [PID: 7] 2026-01-01-00:00:00.000.000 Failed to initialize the HCCP process. Reason: Maybe the last training process is running.",
    ])
    assert found[0].id == "cann-EJ0001"
    assert "7" in found[0].details.get("wrapped_codes", [])
    # alone, the HcclResult is reported with its meaning
    found = _diag(tmp_path, ["RuntimeError: HCCL function error: HcclAllReduce(x), error code is 9"])
    assert found[0].id == "hccl-function-error" and found[0].key == "9" and "9 timeout" in found[0].cause


# ------------------------------------------------- generic readings yield (engine: Aggregator._flush)

YIELD_CASES = [
    ("aclnn EZ1001 before its dtype text", [
        "RuntimeError: call aclnnIndexPut failed, detail:EZ1001: [PID: 7] 2026-01-01-00:00:00.000.000 Parameter check failed.",
        "        Tensor self not implemented for DT_UINT64, should be in dtype support list [DT_FLOAT,DT_INT64].",
    ], "dtype-not-in-support-list", "EZ1001"),
    ("EE1001 before the soc version error", [
        "[ACL ERROR] EE1001: [PID: 7] 2026-01-01-00:00:00.000.000 The argument is invalid.Reason: model load failed",
        "        rtModelCheckCompatibility execute failed, reason=[soc version error][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]",
    ], "soc-version-unsupported", "EE1001"),
    ("507033 set-device failure carrying EL0004", [
        "RuntimeError: Initialize:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:152 NPU function error: c10_npu::SetDevice(device_id_), error code is 507033",
        "[ERROR] 2026-01-01-00:00:00 (PID:7, Device:0, RankID:-1) ERR00100 PTA call acl api failed",
        "EL0004: [PID: 7] 2026-01-01-00:00:00.000.000 Failed to allocate memory.",
    ], "cann-oom", "507033"),
    ("507033 set-device failure carrying a soc mismatch", [
        "RuntimeError: Initialize:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:152 NPU function error: c10_npu::SetDevice(device_id_), error code is 507033",
        "[ERROR] the socversion Ascend910B1 of bin package does not match the current device socverison Ascend310P3.",
    ], "soc-version-mismatch", "507033"),
]


@pytest.mark.parametrize("name,lines,top,wrapped", YIELD_CASES, ids=[c[0] for c in YIELD_CASES])
def test_generic_code_reading_yields_to_the_specific_message_of_its_block(tmp_path, name, lines, top, wrapped):
    found = _diag(tmp_path, lines)
    assert found[0].id == top, [f.id for f in found]
    assert wrapped in found[0].details.get("wrapped_codes", [])
    assert all(f.role != "cause" or f.id == top for f in found if f.severity == "error"), [f.id for f in found]


def test_generic_code_reading_alone_is_still_named(tmp_path):
    found = _diag(tmp_path, ["RuntimeError: call aclnnFoo failed, detail:EZ1001: [PID: 7] 2026-01-01-00:00:00.000.000 x shape [8, 128] and y shape [64, 8] cannot be broadcast"])
    assert [f.id for f in found] == ["cann-EZ1001"] and found[0].role == "cause"


def test_specific_causes_of_one_block_do_not_fold_into_each_other(tmp_path):
    # a catalogued code (priority 0) next to a message entry: both stay findings
    found = _diag(tmp_path, ["RuntimeError: NPU function error: aclrtMalloc, error code is 207001",
                             "EL0004: [PID: 7] 2026-01-01-00:00:00.000.000 Failed to allocate memory requested by HCCL module."])
    assert {"acl-207001", "cann-oom"} <= {f.id for f in found if f.role == "cause"}
