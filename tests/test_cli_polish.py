"""What a new user hit trying every command: one --input range syntax, -o for compare's CSV,
one-line usage errors (rules --category, fix modes), explicit non-Python paths in scan,
seeded factories, fit's capped --batch auto and its unknown-chip hint."""

from __future__ import annotations

import json
import os

import pytest

from ascendify.errors import AscendifyError
from tests.cli_util import run_cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(REPO, "examples", "cuda_project")


# ----------------------------------------------------------------------------- 1. --input value ranges
@pytest.mark.parametrize("text,want", [
    ("0..999", (0.0, 999.0, True)),
    ("-1..1", (-1.0, 1.0, True)),
    ("-2.5..1e-1", (-2.5, 0.1, True)),
    ("0-1000", (0.0, 1000.0, False)),
    ("0.5-2.5", (0.5, 2.5, False)),
    (" 3..3 ", (3.0, 3.0, True)),
])
def test_value_range_both_spellings(text, want):
    from ascendify.probe.spec import parse_value_range

    assert tuple(parse_value_range(text)) == want


@pytest.mark.parametrize("text,why", [
    ("-1-1", "must be lo..hi"),        # negative bounds only with ..
    ("1..0", "is empty"),
    ("5-5", "is empty"),               # low-high excludes high
    ("a..b", "must be lo..hi"),
    ("0~9", "must be lo..hi"),
])
def test_value_range_rejects(text, why):
    from ascendify.probe.spec import parse_value_range

    with pytest.raises(ValueError, match=why):
        parse_value_range(text)


def test_probe_and_fit_parser_takes_both_spellings_with_the_same_integers():
    from ascendify.probe.spec import SpecError, parse_spec

    old = parse_spec("ids:2,16:int64:0-1000")
    new = parse_spec("ids:2,16:int64:0..999")
    assert (old.low, old.high) == (new.low, new.high) == (0, 1000)
    neg = parse_spec("t:4:int32:-3..3")
    assert (neg.low, neg.high) == (-3, 4)
    f = parse_spec("x:64:float32:-1..1")
    assert f.float_range == (-1.0, 1.0)
    t = f.make()
    assert float(t.min()) >= -1.0 and float(t.max()) < 1.0 and float(t.min()) < 0.0
    ids = new.make()
    assert int(ids.min()) >= 0 and int(ids.max()) <= 999
    with pytest.raises(SpecError, match="integer bounds"):
        parse_spec("ids:2:int64:0.5..3")
    with pytest.raises(SpecError, match=r"lo\.\.hi"):
        parse_spec("ids:2:int64:-1-1")


def test_export_parser_takes_both_spellings():
    from ascendify.export.atc import parse_input

    assert parse_input("ids:2,16:int64:0..999").value_range == (0, 999)
    assert parse_input("ids:2,16:int64:0-1000").value_range == (0, 999)  # old: high excluded
    assert parse_input("x:1,3:float32:-1..1").value_range == (-1.0, 1.0)
    assert parse_input("x:1,3:float32:0-1").value_range == (0.0, 1.0)
    with pytest.raises(AscendifyError, match=r"lo\.\.hi"):
        parse_input("x:1,3:float32:-1-1")


def test_one_range_parser_is_shared():
    """export's parser delegates to probe's, so both give the same error text."""
    from ascendify.export.atc import parse_input
    from ascendify.probe.spec import SpecError, parse_spec

    with pytest.raises(AscendifyError) as e1:
        parse_input("x:2:float32:1..0")
    with pytest.raises(SpecError) as e2:
        parse_spec("x:2:float32:1..0")
    assert str(e1.value) == str(e2.value)


def test_help_texts_name_the_canonical_range():
    for cmd in ("probe", "fit", "export"):
        r = run_cli(cmd, "--help")
        assert "lo..hi" in r.out and "low-high]" not in r.out, cmd


# ----------------------------------------------------------------------------- 3. rules --category
def test_rules_unknown_category_is_one_line_exit_2():
    r = run_cli("rules", "--category", "bogus")
    assert r.code == 2 and r.out == ""
    line = r.err.strip()
    assert "\n" not in line and "'bogus'" in line
    for cat in ("device", "distributed", "amp"):
        assert cat in line


def test_rules_known_category_and_prefix_still_list():
    by_cat = run_cli("rules", "--category", "device")
    by_prefix = run_cli("rules", "--category", "DEV")
    assert by_cat.code == by_prefix.code == 0
    assert by_cat.out == by_prefix.out and "DEV001" in by_cat.out and "DST" not in by_cat.out
    assert run_cli("rules", "--category", "Device").out == by_cat.out


# ----------------------------------------------------------------------------- 4. fix modes
@pytest.mark.parametrize("mode", ["--write", "--diff"])
def test_fix_mode_with_out_dir_is_a_usage_error(tmp_path, mode):
    src = tmp_path / "a.py"
    src.write_text("import torch\nx = torch.randn(2).cuda()\n")
    before = src.read_text()
    r = run_cli("fix", mode, "--out-dir", str(tmp_path / "out"), str(src))
    assert r.code == 2
    assert r.err.strip().count("\n") == 0 and "choose one of --diff, --write, --out-dir" in r.err
    assert src.read_text() == before and not (tmp_path / "out").exists()


def test_fix_out_dir_alone_still_works(tmp_path):
    src = tmp_path / "p" / "a.py"
    src.parent.mkdir()
    src.write_text("import torch\nx = torch.randn(2).cuda()\n")
    r = run_cli("fix", "--out-dir", str(tmp_path / "out"), str(tmp_path / "p"))
    assert r.code in (0, 1), r.err
    assert "npu" in (tmp_path / "out" / "a.py").read_text()


# ----------------------------------------------------------------------------- 5. scan of a non-Python path
def test_scan_explicit_non_python_file_is_skipped_with_one_line(tmp_path):
    svg = tmp_path / "p.svg"
    svg.write_text("<svg xmlns='http://www.w3.org/2000/svg'/>\n")
    r = run_cli("scan", str(svg))
    assert f"ascendify: {svg}: not a Python file or notebook; skipped" in r.err
    assert "SYN001" not in r.out
    (tmp_path / "emptydir").mkdir()
    empty = run_cli("scan", str(tmp_path / "emptydir"))
    assert r.code == empty.code == 0
    assert "No files scanned." in r.out


def test_scan_explicit_python_kinds_are_still_scanned(tmp_path):
    for name in ("a.pyi", "b.pyw", "tool"):
        (tmp_path / name).write_text(("#!/usr/bin/env python3\n" if name == "tool" else "") +
                                     "import torch\nx = torch.randn(2).cuda()\n")
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    r = run_cli("scan", "--format", "json", *(str(tmp_path / n) for n in ("a.pyi", "b.pyw", "tool", "k.cu")))
    d = json.loads(r.out)
    paths = {os.path.basename(f["path"]) for f in d["findings"]}
    assert paths == {"a.pyi", "b.pyw", "tool", "k.cu"}, r.err
    assert "skipped" not in r.err


def test_scan_folder_filters_silently(tmp_path):
    (tmp_path / "p.svg").write_text("<svg/>\n")
    (tmp_path / "a.py").write_text("import torch\nx = torch.randn(2).cuda()\n")
    r = run_cli("scan", str(tmp_path))
    assert "skipped" not in r.err and "a.py" in r.out and "p.svg" not in r.out


# ----------------------------------------------------------------------------- 6. seeded factories
@pytest.fixture()
def in_example(monkeypatch):
    """Import the bundled example's ``trainer`` package from its folder without leaving
    __pycache__ there or ``trainer`` in sys.modules for other tests."""
    import sys

    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield EXAMPLE
    for name in set(sys.modules) - before:
        if name == "trainer" or name.startswith("trainer."):
            del sys.modules[name]


def test_every_loader_seeds_before_the_factory(in_example, monkeypatch):
    import torch

    from ascendify.export.loader import load_factory
    from ascendify.probe.model import build_model

    monkeypatch.chdir(in_example)
    a = load_factory("trainer.models:resnet_tiny")
    torch.rand(1000)  # whatever ran in between
    b = build_model("trainer.models:resnet_tiny")
    torch.manual_seed(123)
    c = load_factory("trainer.models:resnet_tiny")
    for (n, p), (_, q), (_, r) in zip(a.state_dict().items(), b.state_dict().items(), c.state_dict().items()):
        assert torch.equal(p, q) and torch.equal(p, r), n
    torch.manual_seed(1)  # and the weights really are random: another seed, another model
    from trainer.models import resnet_tiny
    assert not torch.equal(resnet_tiny().fc.weight, a.fc.weight)


def test_baseline_twice_and_exported_onnx_pass_compare(in_example, tmp_path):
    import numpy as np

    data = tmp_path / "data"
    data.mkdir()
    np.save(data / "x.npy", np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32))
    f = "trainer.models:resnet_tiny"
    a, b, c, onnx = (str(tmp_path / n) for n in ("a.npz", "b.npz", "c.npz", "m.onnx"))
    for npz in (a, b):
        r = run_cli("baseline", f, "--data", str(data), "--npz", npz, cwd=in_example)
        assert r.code == 0, r.err
    r = run_cli("compare", a, b, "--format", "json", cwd=in_example)
    assert r.code == 0 and json.loads(r.out)["verdict"] == "PASS"
    assert json.loads(r.out)["outputs"][0]["max_abs"] == 0.0
    r = run_cli("export", f, "--input", "x:2,3,32,32", "--onnx", onnx, cwd=in_example)
    assert r.code == 0, r.err
    r = run_cli("baseline", onnx, "--data", str(data), "--npz", c, cwd=in_example)
    assert r.code == 0, r.err
    r = run_cli("compare", a, c, "--format", "json", cwd=in_example)
    assert r.code == 0 and json.loads(r.out)["verdict"] == "PASS", r.out
    assert json.loads(r.out)["outputs"][0]["cosine"] > 0.9999
