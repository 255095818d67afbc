"""``ascendify fit`` on the command line: text, JSON, --plot, -o, one-line errors."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("torch")

from tests.cli_util import run_cli  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fit(*args):
    return run_cli("fit", *args, cwd=ROOT)


def test_json_is_valid_and_has_the_documented_keys():
    r = fit("tests.fit.models:mlp", "--input", "x:5,8", "--format", "json", "--runtime-reserve", "0")
    assert r.code == 0, r.err
    d = json.loads(r.out)
    for key in ("peak_bytes", "reserved_bytes", "split", "top_modules", "timeline", "chip", "fits", "margin_bytes", "rows"):
        assert key in d
    assert d["chip"] is None and d["fits"] is None and d["margin_bytes"] is None
    assert d["split"]["parameters"] == 848 and sum(d["split"].values()) == d["peak_bytes"]
    assert d["top_modules"][0]["module"] == "*" and d["top_modules"][0]["activation_bytes"] == 5 * 16 * 4
    assert d["timeline"] and max(p["bytes"] for p in d["timeline"]) == d["peak_bytes"]
    assert d["rows"][0]["lever"] == "baseline"


def test_text_report_with_chip_and_levers():
    r = fit("tests.fit.models:blocks", "--input", "x:64,8", "--chip", "Ascend910B3", "--amp", "bf16",
            "--checkpointing", "auto")
    assert r.code == 0, r.err
    assert "Peak " in r.out and "Memory over the step" in r.out and "Levers" in r.out
    assert "amp bf16 + checkpointing auto" in r.out
    assert "Chip Ascend910B3" in r.out


def test_output_file_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    out, png, svg = tmp_path / "fit.json", tmp_path / "fit.png", tmp_path / "fit.svg"
    r = fit("tests.fit.models:mlp", "--input", "x:5,8", "-o", str(out), "--plot", str(png))
    assert r.code == 0, r.err
    assert json.loads(out.read_text())["peak_bytes"] > 0  # .json file → JSON without --format
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = fit("tests.fit.models:mlp", "--input", "x:5,8", "--plot", str(svg))
    assert r.code == 0 and svg.read_text().lstrip().startswith("<?xml")


@pytest.mark.parametrize("args, needle", [
    (("tests.fit.models:nope", "--input", "x:5,8"), "has no attribute 'nope'"),
    (("tests.fit.nomodule:mlp", "--input", "x:5,8"), "cannot import 'tests.fit.nomodule'"),
    (("tests.fit.models:broken", "--input", "x:5,8"), "failed while building the model"),
    (("tests.fit.models:mlp", "--input", "x:5,zero"), "dimension 'zero' is not a positive integer"),
    (("tests.fit.models:mlp", "--input", "x:5,8:float99"), "dtype 'float99'"),
    (("tests.fit.models:mlp", "--input", "x:5,9"), "the training step failed in forward"),
    (("tests.fit.models:mlp",), "--input is required"),
    (("tests.fit.models:no_grad_output", "--input", "x:2,4"), "no floating-point tensor that requires grad"),
    (("tests.fit.models:reads_data", "--input", "x:2,4"), "reads tensor values"),
    (("tests.fit.models:mlp", "--input", "x:5,8", "--batch", "12"), "only 'auto'"),
    (("tests.fit.models:mlp", "--input", "x:5,8", "--plot", "fit.pdf"), "expected a .png or .svg"),
    (("tests.fit.models:mlp", "--input", "x:5,8", "--alloc-conf", "expandable_segments"), "PYTORCH_NPU_ALLOC_CONF"),
])
def test_bad_input_is_one_line(args, needle):
    r = fit(*args)
    assert r.code == 2
    assert needle in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert "Traceback" not in r.err


def test_does_not_fit_exits_1():
    # 64 GiB less a 64 GiB runtime reserve leaves nothing
    r = fit("tests.fit.models:mlp", "--input", "x:5,8", "--chip", "Ascend910B3", "--runtime-reserve", "65536",
            "--format", "json", "--no-suggest")
    assert r.code == 1, r.err
    d = json.loads(r.out)
    assert d["fits"] is False and d["margin_bytes"] < 0 and len(d["rows"]) == 1


def test_plot_without_matplotlib_is_a_clear_error(monkeypatch, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    r = fit("tests.fit.models:mlp", "--input", "x:5,8", "--plot", str(tmp_path / "m.png"))
    assert r.code == 2 and "matplotlib is not installed" in r.err and len(r.err.strip().splitlines()) == 1


def test_bf16_rows_on_a_chip_without_bf16_say_so():
    d = json.loads(fit("tests.fit.models:mlp", "--input", "x:5,8", "--amp", "bf16", "--chip", "Ascend910A", "--format", "json").out)
    assert any("Ascend910A has no bf16" in n and "--amp fp16" in n for n in d["notes"])
    d = json.loads(fit("tests.fit.models:mlp", "--input", "x:5,8", "--amp", "bf16", "--chip", "Ascend910B3", "--format", "json").out)
    assert not any("no bf16" in n for n in d["notes"])
    d = json.loads(fit("tests.fit.models:mlp", "--input", "x:5,8", "--amp", "fp16", "--chip", "Ascend910A", "--format", "json").out)
    assert not any("no bf16" in n for n in d["notes"])


def test_plot_line_on_stderr_stdout_stays_the_report(tmp_path):
    svg = tmp_path / "m.svg"
    r = fit("tests.fit.models:mlp", "--input", "x:5,8", "--plot", str(svg), "--format", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["peak_bytes"] > 0
    assert r.err.strip().splitlines()[-1] == f"plot: {svg}"


def test_bf16_note_names_the_batch_auto_row_too():
    d = json.loads(fit("tests.fit.models:mlp", "--input", "x:5,8", "--amp", "bf16", "--chip", "Ascend310P3",
                       "--batch", "auto", "--format", "json").out)
    auto = d["rows"][-1]
    assert auto["lever"] == "batch auto" and auto["amp"] == "bf16"
    note = next(n for n in d["notes"] if "has no bf16" in n)
    assert "amp bf16, batch auto row(s)" in note


def test_unknown_chip_points_at_the_chip_list():
    r = fit("tests.fit.models:mlp", "--input", "x:5,8", "--chip", "Ascend999")
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1
    assert "docs/chips.md" in r.err and "--chips" not in r.err
    assert os.path.isfile(os.path.join(ROOT, "docs", "chips.md"))
