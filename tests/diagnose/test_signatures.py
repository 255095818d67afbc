"""Every signature family, on lines composed from the documented message formats
(research notes accuracy-profiling-atc.md §1.6, §5.2–5.4; torch_npu strings in the
reference data).  Names, paths and pids are made up."""

from __future__ import annotations

import re

import pytest

from ascendify.diagnose.signatures import Matcher, check_pattern, load

M = Matcher()

# (line, expected signature id, expected key or None)
POSITIVE = [
    # CPU fallback, three documented wordings
    ("CAUTION: The operator 'aten::unique_consecutive' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications.",
     "cpu-fallback", "aten::unique_consecutive"),
    ("CAUTION: The operator aten::logit_backward and aten::logit_backward.out is currently not supported on the NPU backend. Now this operator will fallback to run on the CPU and may have performance implications.",
     "cpu-fallback", "aten::logit_backward"),
    ("CPU fallback is allowed because TORCH_NPU_FALLBACK_CPU_DISABLE=0. Since the NPU interface does not support operator 'aten::_sparse_csr_sum.dim_dtype', the operator will fall back to CPU.",
     "cpu-fallback", "aten::_sparse_csr_sum.dim_dtype"),
    ("Warning: kernel [ArgSort] can not support dtype int32 or int64 on AiCore, Now this kernel is running on AiCpu.If you are more concerned about high-performance execution,please cast dtype to float32.",
     "aicpu-kernel-dtype", "ArgSort"),
    # memory
    ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 3; 60.96 GiB total capacity; 50.10 GiB already allocated; 50.10 GiB current active; 1.20 GiB free; 58.00 GiB reserved in total by PyTorch)",
     "npu-oom", None),
    ("RuntimeError: NPU out of memory. Tried to allocate more than 1EB memory.", "npu-oom-rejected", None),
    ("[ERROR] RUNTIME(2936187,python3):2026-04-21-14:19:39.429.491 [npu_driver.cc:780]2969960 DevMemAllocHugePageManaged:report error module_type=1, module_name=EL9999 halMemAlloc failed, drvRetCode=6",
     "cann-oom", None),
    ("EL0004: Failed to allocate memory requested by HCCL module.", "cann-oom", None),
    # HCCL
    ("EI0006: Getting socket times out. Reason: 1. The remote does not initiate a connect request.", "hccl-connect-timeout", None),
    ("[ERROR] HCCL(811,python):2026-03-02-08:00:01.000.001 [transport.cc:10]812 EI0002: The wait execution of the Notify register times out.",
     "hccl-exec-timeout", None),
    ("EI0015: rootInfo detection failed.", "hccl-rootinfo", None),
    # environment
    ("ImportError: /opt/venv/lib/python3.10/site-packages/torch_npu/lib/libtorch_npu.so: undefined symbol: MsprofSysCycleTime",
     "torch-npu-cann-mismatch", "MsprofSysCycleTime"),  # the catalogue's specific entry supersedes undefined-symbol
    ("ImportError: /opt/venv/lib/python3.10/site-packages/apex/_C.so: undefined symbol: _Z9fused_adamv",
     "undefined-symbol", "_Z9fused_adamv"),
    ("OSError: libascendcl.so: cannot open shared object file: No such file or directory", "missing-library", "libascendcl.so"),
    ("ModuleNotFoundError: No module named 'tbe.common'", "cann-env-not-sourced", None),
    ("EH9999 init env failed", "cann-python-deps", None),
    ("AssertionError: Torch not compiled with CUDA enabled", "cuda-not-compiled", None),
    ("RuntimeError: Distributed package doesn't have NCCL built in", "nccl-on-npu", None),
    ("ModuleNotFoundError: No module named 'xformers'", "cuda-only-package", "xformers"),
    # numpy 2
    ("A module that was compiled using NumPy 1.x cannot be run in NumPy 2.1.0 as it may crash.", "numpy2-abi", None),
    ("AttributeError: _ARRAY_API not found", "numpy2-abi", None),
    # AI Core
    ("[ERROR] RUNTIME(4711,python3):2026-01-02-03:04:05.006.007 [task.cc:1]4712 Aicore kernel execute failed, ret=507015, aicore exception fault kernel_name=GatherV2_8c1f_mix_aiv",
     "aicore-exception", "GatherV2_8c1f_mix_aiv"),
    ("RuntimeError: ACL stream synchronize failed, error code is 507015", "aicore-exception", None),
    ("NPU function error: aclrtSynchronizeStream, error code is 507035", "aicore-timeout", "507035"),
    # ATC
    ("ATC run failed, Please check the detail log, Try 'atc --help' for more information", "atc-failed", None),
    ("E10011: Parameter --input_shape contains -1 but no dynamic option is set.", "atc-argument", "E10011"),
    ("E19010: No parser is registered for Op [Resize_12, optype [Resize].", "atc-unsupported-op", "Resize_12"),
    ("E40021: Failed to compile Op [Conv3DBackpropInput_7]. (oppath: [/x/y.py], optype: [Conv3DBackpropInput]) optype is [Conv3DBackpropInput]",
     "atc-op-compile", "Conv3DBackpropInput"),
    # dtype
    ("TypeError: Ascend310P3 does not support bf16: DT_BF16 is not supported by MatMulV2", "bf16-unsupported", None),
    ("RuntimeError: DT_DOUBLE is not supported by op Mul on this device", "float64-unsupported", None),
    # async
    ("The Inner error is reported as above. The process exits for this inner error, and the current working operator name is Add.", "async-inner-error", None),
]


@pytest.mark.parametrize("line,sid,key", POSITIVE, ids=[p[1] + str(i) for i, p in enumerate(POSITIVE)])
def test_signature_matches(line, sid, key):
    lm = M.match_line(line)
    assert lm is not None, line
    got = {s.id: g for s, g in lm.signatures}
    assert sid in got, (sid, list(got))
    s = next(s for s, _ in lm.signatures if s.id == sid)
    if key is not None:
        assert got[sid][s.key] == key


@pytest.mark.parametrize("line", [
    "step 100 loss=0.2341 lr=1e-4",
    "Using bf16 mixed precision on Ascend910B3",
    "please double-check the data path",
    "INFO: NPU memory: 10.5 GiB allocated",
    "the operator was slow but ran on the NPU",
    "hash 0xE12345F",
    "epoch 3 step 507015 done",  # a number that looks like an ACL code, without "error code is"
    "dataset ES2024 split EX1234",  # code-shaped ids whose module letter is not a CANN module
])
def test_benign_lines_do_not_match(line):
    assert M.match_line(line) is None


def test_trigger_finds_every_positive_line():
    kb = load()
    for line, sid, _ in POSITIVE:
        assert kb.trigger.search(line.encode()), (sid, line)


def test_uncovered_literal_is_rejected_on_load():
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    from importlib import resources

    from ascendify.diagnose.signatures import parse

    data = tomllib.loads(resources.files("ascendify.diagnose").joinpath("data").joinpath("signatures.toml").read_text(encoding="utf-8"))
    data["signature"][0]["any"] = ["zebra crossing"]
    with pytest.raises(ValueError, match="zebra crossing"):
        parse(data)


def test_generic_codes_cann_acl_and_torch_npu():
    # catalogued codes become catalogue entries (data/catalogue/*_codes.toml) ...
    lm = M.match_line("[ERROR] 2026-05-01-10:05:12 (PID:4242, Device:0, RankID:0) ERR01100 OPS call acl api failed")
    assert [s.id for s, _ in lm.signatures] == ["torch-npu-ERR01100"] and lm.err_codes == []
    lm = M.match_line("EZ9999: Inner Error!")
    assert [s.id for s, _ in lm.signatures] == ["cann-EZ9999"] and lm.cann_codes == []
    lm = M.match_line("aclnnInplaceCopy failed, error code is 561103")
    assert [s.id for s, _ in lm.signatures] == ["acl-561103"] and lm.acl_codes == []
    # ... the others reach the generic finders
    lm = M.match_line("[ERROR] 2026-05-01-10:05:12 (PID:4242, Device:0, RankID:0) ERR05100 XYZ call acl api failed")
    assert lm.err_codes == [("05", "100", "XYZ")]
    lm = M.match_line("EZ4321: Inner Error!")
    assert lm.cann_codes == ["EZ4321"]
    lm = M.match_line("aclnnInplaceCopy failed, error code is 561999")
    assert lm.acl_codes == [561999]
    kb = load()
    assert kb.acl_code(561003)[1] == "cause"
    assert kb.acl_code(207001)[0].startswith("ACL_ERROR_RT_MEMORY_ALLOCATION")
    assert kb.cann_code("EZ9999")[1] == "wrapper"
    assert kb.cann_code("EI0013")[1] == "consequence"
    # unknown code: module from the second character, 9xxx = inner error
    title, role, _ = kb.cann_code("EJ9123")
    assert "HCCP" in title and role == "wrapper"


def test_specific_signature_claims_its_code():
    lm = M.match_line("EI0006: Getting socket times out.")
    assert [s.id for s, _ in lm.signatures] == ["hccl-connect-timeout"]
    assert lm.cann_codes == []  # not repeated as a generic code finding


def test_patterns_have_no_nested_quantifiers():
    for bad in [r"(a+)+", r"(?:x*y)*", r"(\w+\s?)+$", r"(a{1,3}b)*"]:
        with pytest.raises(ValueError):
            check_pattern(bad)
    for good in [r"kernel_name=(?P<k>[A-Za-z0-9_]+)", r"(?:ab)?c+", r"undefined symbol: ?(?P<s>\S+)"]:
        check_pattern(good)
    kb = load()
    for s in kb.signatures:
        if s.regex is not None:
            check_pattern(s.regex.pattern)


def test_every_family_in_the_issue_has_a_signature():
    families = {s.family for s in load().signatures}
    assert {"cpu-fallback", "memory", "hccl", "environment", "cuda-leftover", "numpy", "aicore", "atc", "dtype", "async"} <= families


def test_bf16_names_the_chip_without_bf16():
    lm = M.match_line("TypeError: Ascend310P3 does not support bf16: DT_BF16 is not supported by MatMulV2")
    assert {s.id: g for s, g in lm.signatures}["bf16-unsupported"] == {"chip": "Ascend310P3"}
    lm = M.match_line("RuntimeError: bf16 unsupported on Ascend910B3")  # an A2 chip: not named as a chip without bf16
    assert {s.id: g for s, g in lm.signatures}["bf16-unsupported"] == {}


def test_signature_data_is_complete():
    for s in load().signatures:
        assert s.cause and s.fix and s.next_step and s.source, s.id
        assert re.fullmatch(r"[a-z0-9-]+|(?:cann|acl|torch-npu)-[A-Z0-9]+", s.id)  # code entries: cann-EZ9999, acl-107002


def test_every_referenced_scan_rule_exists():
    """Each code a signature names must be a rule of `ascendify scan` (no invented codes)."""
    from ascendify.rules.registry import load_rules

    rules = load_rules()
    referenced = set()
    for s in load().signatures:
        referenced.update(s.rules)
        referenced.update(code for _, code in s.rule_by_key)
    assert referenced, "no signature links a scan rule"
    missing = sorted(c for c in referenced if c not in rules)
    assert missing == [], missing


def test_code_causes_name_a_rule():
    # signatures whose cause is in the user's code link a scan rule
    sigs = {s.id: s for s in load().signatures}
    for sid in ("cpu-fallback", "cuda-not-compiled", "nccl-on-npu", "bf16-unsupported", "float64-unsupported", "atc-unsupported-op"):
        assert sigs[sid].rules, sid
    assert sigs["cuda-only-package"].rules_for("apex") == ("EXT002",)
