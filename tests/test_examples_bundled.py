"""The bundled inputs for `profile` and `diagnose` (examples/profile_sample, examples/logs) give the
reports their READMEs promise, and the profile sample is what its generator writes."""

from __future__ import annotations

import importlib.util
import json
import os

from click.testing import CliRunner

from ascendify.cli import cli
from ascendify.diagnose.engine import diagnose
from ascendify.profile.analyze import analyze

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "examples", "profile_sample")
LOGS = os.path.join(ROOT, "examples", "logs")


def _generator():
    spec = importlib.util.spec_from_file_location("make_sample", os.path.join(SAMPLE, "make_sample.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_profile_sample_is_its_generators_output_and_small():
    g = _generator()
    want = {"kernel_details.csv": g.kernel_details(), "step_trace_time.csv": g.step_trace_time(),
            "trace_view.json": json.dumps(g.trace_view(), separators=(",", ":")) + "\n",
            "operator_details.csv": g.operator_details(),
            "communication.json": json.dumps(g.communication(), indent=1) + "\n"}
    assert sorted(os.listdir(g.RUN)) == sorted(want)
    total = 0
    for name, text in want.items():
        with open(os.path.join(g.RUN, name), encoding="utf-8", newline="") as fh:
            assert fh.read() == text, f"{name} is stale: run python examples/profile_sample/make_sample.py"
        total += len(text.encode("utf-8"))
    assert total < 100 * 1024


def test_profile_sample_report():
    rep = analyze(SAMPLE)
    k = rep["kernels"]
    # 5 steps x (4 + 6 + 4 + 4 + 2 + 2 + 6 + 3 + 2 + 1 + 1) tasks
    assert k["rows"] == 5 * 35
    assert k["top_ops"][0]["op_type"] == "MatMulV2"
    a = k["aicpu"]
    assert [(x["op_type"], x["input_dtypes"], x["count"]) for x in a] == [("IndexPutV2", "DOUBLE;BOOL", 5)]
    assert a[0]["above_advisor_threshold"] is True
    st = rep["step_time"]
    assert st["steps_used"] == 5 and st["bound"] == "free"
    tr = rep["trace"]
    assert tr["profiler_steps"] == 5 and tr["online_compiles"] == 24
    assert tr["dataloader"]["slow_calls"] == 3 and tr["dataloader"]["starving"] is True
    apis = {f["api"] for f in tr["fusion"]}
    assert {"torch_npu.npu_confusion_transpose", "torch_npu.fast_gelu", "torch_npu.optim.NpuFusedAdamW"} <= apis
    assert [c["op"] for c in rep["cpu_fallback"]] == ["aten::unique2"]
    assert rep["communication"]["ops"][0]["op"] == "hcom_allReduce__424_0_1"
    assert rep["notes"] == []
    areas = [s["area"] for s in rep["suggestions"]]
    assert areas[0] == "aicpu" and {"dynamic-shape", "step-time", "dataloader", "cpu-fallback"} <= set(areas)


def test_profile_sample_cli():
    r = CliRunner().invoke(cli, ["profile", SAMPLE], standalone_mode=False)
    assert r.exception is None, r.output
    assert "IndexPutV2 DOUBLE;BOOL → DOUBLE: ×5" in r.output
    assert "verdict: free-bound" in r.output


def test_two_rank_hccl_timeout_log():
    rep = diagnose((os.path.join(LOGS, "hccl_timeout"),))
    ids = [f.id for f in rep.findings]
    assert ids[:2] == ["npu-oom", "hccl-exec-timeout"]
    assert rep.findings[0].ranks == {1} and rep.findings[1].ranks == {0}
    assert rep.first_error().evidence[0].file.endswith("rank_1.log")


def test_aicore_error_log():
    rep = diagnose((os.path.join(LOGS, "aicore_error.log"),))
    assert rep.findings[0].id == "aicore-exception"  # the cause before its wrappers
    assert any(f.id == "aicore-exception" and f.key == "IndexPut_9f3a_mix_aiv" for f in rep.findings)  # the plog line
    assert "torch-npu-ERR00100" in [f.id for f in rep.findings]


def test_diagnose_cli_fail_on_never_exits_0(capsys):
    from tests.compare.helpers import run

    for args in (["diagnose", os.path.join(LOGS, "aicore_error.log")], ["diagnose", os.path.join(LOGS, "hccl_timeout")]):
        code, out, err = run(args, capsys)
        assert code == 1, out + err  # errors found
        code, out, err = run(args + ["--fail-on", "never"], capsys)
        assert code == 0, out + err


def test_doctor_host_sample_fails_on_the_planted_cann_mismatch():
    import json as _json

    from tests.cli_util import run_cli as _run

    base = os.path.join(ROOT, "examples", "doctor_host")
    r = _run("doctor", "--root", os.path.join(base, "root"), "--env-file", os.path.join(base, "env.txt"),
             "--npu-smi", os.path.join(base, "npu-smi-info.txt"), "--format", "json")
    assert r.code == 1, r.err
    checks = {c["id"]: c["status"] for c in _json.loads(r.out)["checks"]}
    assert checks["matrix.torch_npu_cann"] == "fail" and checks["devices.memory"] == "warn"
    assert checks["devices.chips"] == "ok" and checks["env.set_env"] == "ok"
