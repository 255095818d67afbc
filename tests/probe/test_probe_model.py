"""Model mode: planted issues reported at the right source lines; bad input handling."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from ascendify.cli import cli
from ascendify.errors import AscendifyError
from ascendify.probe.run import probe_model
from ascendify.probe.spec import SpecError, parse_spec, vary

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models.py")


def _line(tag: str) -> str:
    with open(MODELS, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if f"# {tag}" in line:
                return f"{MODELS}:{i}"
    raise AssertionError(tag)


@pytest.fixture(scope="module")
def planted():
    return probe_model("tests.probe.models:planted", ["x:4,8:float32"], [], vary="batch", train=True,
                       torch_npu="2.7.1.post11", chip="Ascend310P3")


def _kinds(res, kind):
    return [f for f in res["classification"]["findings"] if f["kind"] == kind]


def test_planted_float64_line(planted):
    f = [x for x in _kinds(planted, "float64") if x["op"] == "sum"]
    assert f and _line("LINE_FLOAT64") in f[0]["lines"]


def test_planted_cpu_fallback_line(planted):
    f = _kinds(planted, "cpu_fallback")
    assert [x["op"] for x in f] == ["linalg_inv_ex"]
    assert f[0]["lines"] == [_line("LINE_FALLBACK")]
    assert "VariableFallbackKernel" in f[0]["source"]
    assert f[0]["recipe"] and "explicit" in f[0]["recipe"]


def test_planted_nonzero_data_dependent_line(planted):
    dd = [d for d in planted["dynamic"]["data_dependent"] if d["op"] == "nonzero"]
    assert dd and dd[0]["kind"] == "data_dependent" and dd[0]["lines"] == [_line("LINE_NONZERO")]


def test_planted_batch_varying(planted):
    cmp_ = planted["dynamic"]["comparison"]
    assert "view" in cmp_["shape_changing_ops"] or "_unsafe_view" in cmp_["shape_changing_ops"] \
        or "reshape" in cmp_["shape_changing_ops"] or "mean" in cmp_["shape_changing_ops"]
    assert _line("LINE_BATCH") in cmp_["shape_changing_lines"].values()
    adv = planted["dynamic"]["atc"]
    assert adv["mode"] == "dynamic_batch_size" and '--dynamic_batch_size="4,8"' in adv["atc"]
    assert any("nonzero" in n for n in adv["notes"])
    # 310P compiles online by default → jit_compile=False advice
    assert any("jit_compile=False" in n for n in adv["notes"])


def test_planted_verdict(planted):
    assert planted["verdict"].startswith("VERDICT: runs with caveats on torch_npu 2.7.1.post11")
    assert "linalg_inv_ex" in planted["verdict"]


def test_backward_ops_attributed_to_forward_lines(planted):
    rows = {r["op"]: r for r in planted["classification"]["rows"]}
    bw = [r for r in rows.values() if "backward" in r["phases"]]
    assert bw
    for r in bw:
        for ln in r["lines"]:
            assert ln.startswith(MODELS), (r["op"], ln)


def test_factory_errors_are_one_line():
    with pytest.raises(AscendifyError, match="cannot import 'no_such_pkg.mod'"):
        probe_model("no_such_pkg.mod:f", ["x:1"], [])
    with pytest.raises(AscendifyError, match="failed while building the model: RuntimeError: weights file missing"):
        probe_model("tests.probe.models:broken", ["x:1"], [])


def test_model_failure_keeps_partial_ops():
    res = probe_model("tests.probe.models:fails_on_cpu", ["x:2,4"], [], torch_npu="2.7.1.post11")
    assert res["error"]["op"] == "mm" and res["error"]["type"] == "RuntimeError"
    assert res["error"]["line"].endswith(_line("shape mismatch").split(":")[-1]) or "models.py" in res["error"]["line"]
    assert [r["op"] for r in res["ops"]][:1] == ["mul.Tensor"]
    assert res["verdict"].startswith("VERDICT: failed")


@pytest.mark.parametrize("bad,part", [("x", "expected name"), ("x:2,a", "'a'"), ("x:2:float99", "float99"),
                                      ("1x:2", "identifier"), ("x:2:int64:9-1", "empty"), ("x:0", "'0'")])
def test_bad_specs_name_the_part(bad, part):
    with pytest.raises(SpecError, match=part):
        parse_spec(bad)


def test_vary():
    s = [parse_spec("x:2,3,224,224"), parse_spec("ids:2,16:int64:0-1000")]
    assert [v.shape for v in vary(s, "batch")] == [(4, 3, 224, 224), (4, 16)]
    assert vary(s, "spatial")[0].shape == (2, 3, 256, 256)
    assert vary(s, "seq")[1].shape == (2, 32)
    with pytest.raises(SpecError):
        vary([parse_spec("x:4")], "seq")


def test_cli_usage_error_names_bad_part():
    r = CliRunner().invoke(cli, ["probe", "tests.probe.models:planted", "--input", "x:4,eight"])
    assert r.exit_code == 2 and "eight" in r.output


def test_cli_json(tmp_path):
    out = tmp_path / "r.json"
    r = CliRunner().invoke(cli, ["probe", "tests.probe.models:planted", "--input", "x:4,8", "--torch-npu", "2.7.1.post4",
                                 "--format", "json", "-o", str(out)])
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    assert d["classification"]["torch_npu"] == "2.7.1.post11"
    assert any("2.7.1.post11" in w for w in d["classification"]["warnings"])


def test_exit_codes_through_entry_point(capsys):
    from ascendify.cli import main
    with pytest.raises(SystemExit) as e:
        main(["probe", "tests.probe.models:planted", "--input", "x:4,8", "--torch-npu", "2.7.1.post11"])
    assert e.value.code == 0  # caveats only
    with pytest.raises(SystemExit) as e:
        main(["probe", "tests.probe.models:planted", "--input", "x:4,8", "--torch-npu", "2.7.1.post11",
              "--fallback-disabled"])
    assert e.value.code == 1
    assert "VERDICT: blocked on torch_npu 2.7.1.post11 — 1 cpu fallback (linalg_inv_ex)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["probe", "tests.probe.models:broken", "--input", "x:1"])
    assert e.value.code == 2
    assert "weights file missing" in capsys.readouterr().err
