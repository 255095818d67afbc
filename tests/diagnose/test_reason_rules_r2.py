"""Issue 21, family 1 in logs written here (red-team helper R2): the message's own reason read in plain words (a
value out of range, a storage format, a dtype support list, a non-decreasing list, UB space, an invalid --soc_version),
torch_npu's asynchronous-error boilerplate never taken for the reason, and a known issue that follows a phrase rule
unless it shares the reason's words; each rule with a near miss that must not fire."""

from __future__ import annotations

import pytest

from ascendify.diagnose import reason
from ascendify.diagnose.engine import diagnose
from tests.diagnose.diag_util import top_finding


def _words(f):
    return (f.title + " " + f.cause + " " + f.fix).lower()


CASES = [
    ("reason-value-out-of-range",
     "[rank1]: RuntimeError: call aclnnIncreFlashAttention failed, error code is 561002\n"
     "[rank1]: [PID: 812] 2026-04-11-09:12:44.551.203 EZ1001: Attr kvHeadNum is out of range, it should be in "
     "[1, 128], but got 160.\n",
     ("kvheadnum is out of range", "allowed range 1, 128", "inside the range")),
    ("reason-value-out-of-range",
     "RuntimeError: call aclnnLayerNorm failed, detail:EE1001: [PID: 9] 2026-02-08-17:30:02.114.509 The argument "
     "is invalid.Reason: eps must be greater than 0, but got 0.\n        TraceBack (most recent call last):\n"
     "        Check param failed.\n",
     ("eps must be greater than", "inside the range")),
    ("reason-storage-format-unsupported",
     "E89999: [PID: 5] 2026-03-02-14:55:31.899.001 op[WeightQuantBatchMatmulV2], weight format is FRACTAL_NZ, "
     "which is not supported here, only support ND when antiquant_scale is per-group[FUNC:CheckFormat]\n",
     ("storage format", "needs nd", "npu_format_cast", "vllm_ascend_enable_nz=0")),
    ("reason-dtype-support-list",
     "EZ1001: [PID: 2] 2025-12-01-08:09:10.001.998 [aclnnIndexSelect] dtype of index should be in dtype support "
     "list [DT_INT32,DT_INT64], but got DT_FLOAT16.\n",
     ("index is dt_float16", "dt_int32,dt_int64", ".long()")),
    ("reason-ascending-order",
     "EZ9999: [PID: 1180] 2026-09-14-10:22:48.771.004 cu_seqlens should be monotonically non-decreasing, but "
     "index 5 is 30 and index 4 is 64.[FUNC:Check][FILE:a.cpp][LINE:1]\n",
     ("ascending", "non-decreasing")),
    ("reason-ub-overflow",
     "EZ9999: [PID: 44] 2026-01-19-22:41:07.663.210 LayerNormV4 tiling: required UB size 300000 bytes is larger "
     "than the available UB size 196352 bytes.[FUNC:Tiling][FILE:t.cpp][LINE:3]\n",
     ("unified buffer", "reduce the dimension")),
    ("reason-soc-version-invalid",
     "ATC run failed, Please check the detail log, Try 'atc --help' for more information\n"
     "E10001: Value [Ascend310] for parameter [--soc_version] is invalid. Reason: The value is not supported.\n",
     ("(ascend310)", "npu-smi info", "--soc_version=ascend")),
    ("reason-alignment",
     "[rank0]: RuntimeError: call aclnnGroupedMatmulV4 failed, detail:EZ1001: [PID: 6619] 2026-05-20-13:44:10.009.120 "
     "The n dim of weight is 3001, it should be aligned to 16 for bfloat16.\n",
     ("aligned to 16", "pad the dimension", "next multiple")),
]


@pytest.mark.parametrize("rule,text,words", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_reason_rule_reads_the_message(tmp_path, rule, text, words):
    f = top_finding(tmp_path, text)
    assert rule in (f.settings or []), (rule, f.title, f.settings)
    got = _words(f)
    for w in words:
        assert w in got, (w, got)
    assert "]]" not in f.cause and "{" not in f.cause  # optional segments and placeholders are filled


NEAR_MISSES = [
    ("reason-value-out-of-range", "IndexError: index out of range in self\n"),
    ("reason-value-out-of-range", "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)\n"),
    ("reason-storage-format-unsupported", "EZ9999: [PID: 1] op[MatMulV2] the format of x1 is ND and it is fine, "
                                          "the shape [3, 5] does not match\n"),
    ("reason-dtype-support-list", "EZ1001: [PID: 1] Tensor self not implemented for DT_FLOAT16, should be in dtype "
                                  "support list [DT_FLOAT,DT_BFLOAT16].\n"),
    ("reason-ascending-order", "EZ9999: [PID: 1] the sequence lengths are increasing with the batch index\n"),
    ("reason-soc-version-invalid", "ATC start working now, soc_version=Ascend910B3, please wait for a moment.\n"),
    ("reason-alignment", "EZ9999: [PID: 1] the text of the report is aligned to the left, width 16\n"),
]


@pytest.mark.parametrize("rule,text", NEAR_MISSES, ids=[c[0] + str(i) for i, c in enumerate(NEAR_MISSES)])
def test_reason_rule_does_not_fire_on_a_near_miss(tmp_path, rule, text):
    p = tmp_path / "x.log"
    p.write_text(text, encoding="utf-8")
    for f in diagnose((str(p),)).findings:
        assert rule not in (f.settings or [])


def test_torch_npu_async_boilerplate_is_not_the_reason():
    # the line torch_npu prints with every asynchronous inner error says nothing about this one
    assert reason.extract("Since the operator is called asynchronously, the stacktrace may be inaccurate. If you want "
                          "to get the accurate stacktrace, please set the environment variable ASCEND_LAUNCH_BLOCKING=1.") == ""
    assert reason.extract("        Check param failed.") == ""
    assert reason.extract("EZ9999: [PID: 4] op[Foo] tiling failed because k is 0") == "op[Foo] tiling failed because k is 0"


def test_reason_behind_async_boilerplate_titles_the_finding(tmp_path):
    f = top_finding(tmp_path, (
        "RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the current "
        "working operator name is GroupNormSwishGrad.\nSince the operator is called asynchronously, the stacktrace may be "
        "inaccurate. If you want to get the accurate stacktrace, please set the environment variable ASCEND_LAUNCH_BLOCKING=1.\n"
        "[ERROR] 2026-01-19-22:41:07 (PID:4411, Device:3, RankID:3) ERR00100 PTA call acl api failed\nEZ9999: Inner Error!\n"
        "EZ9999: [PID: 4411] 2026-01-19-22:41:07.663.210 GroupNormSwishGrad tiling: required UB space 262400 bytes is "
        "larger than available UB size 196352 bytes.[FUNC:T][FILE:g.cpp][LINE:301]\n        TraceBack (most recent call last):\n"))
    assert "required UB space" in f.title
    assert "asynchronously" not in f.title
    assert "reason-ub-overflow" in f.settings


class _Match:
    def __init__(self, confidence):
        self.confidence = confidence
        self.close = confidence >= 0.7
        self.record = {"id": "demo#2", "url": "https://github.com/example/demo/issues/2", "cause": "Another bug.",
                       "fix": "Upgrade demo.", "fixed_in": None}

    def to_dict(self):
        return {"id": "demo#2", "confidence": self.confidence}


def _attach(fid, family, settings, confidence):
    from ascendify.diagnose.engine import Aggregator, Finding

    f = Finding(id=fid, family=family, title="x", severity="error", role="cause", cause="Own cause.", fix="Own fix.",
                next_step="", source="")
    f.settings = settings
    Aggregator._attach(Aggregator.__new__(Aggregator), f, _Match(confidence), {})
    return f


@pytest.mark.parametrize("fid,family,settings,confidence,leads", [
    ("cann-EZ1001", "cann-code", ["reason-value-out-of-range"], 0.95, False),  # the reason read in plain words leads
    ("cann-EZ1001", "cann-code", [], 0.95, True),  # nothing read the reason: the close thread leads
    ("two-accelerators", "python", [], 0.75, False),  # a specific Python-message entry keeps its own cause first
    ("python-exception", "python", [], 0.75, True),  # an exception no entry explains: the thread leads
])
def test_known_issue_order(fid, family, settings, confidence, leads):
    f = _attach(fid, family, settings, confidence)
    assert f.cause.startswith("Another bug.") is leads
    assert "Upgrade demo" in f.fix


def test_an_address_out_of_range_is_no_argument_out_of_range(tmp_path):
    # CANN's kernel-exception line names an address, not an op argument, and its [FUNC:...] tail is no range
    from tests.diagnose.diag_util import diagnose_text

    log = ("EZ9999: Inner Error!\n"
           "EZ9999: [PID: 4410] 2025-11-03-04:22:19.101.223 The DDR address of the MTE instruction is out of range."
           "[FUNC:PrintCoreErrorInfo][FILE:device_error_proc.cc][LINE:1234]\n")
    rep = diagnose_text(tmp_path, log)
    assert rep.findings
    assert all("reason-value-out-of-range" not in f.settings for f in rep.findings)
    assert all("allowed range FUNC" not in f.cause for f in rep.findings)
