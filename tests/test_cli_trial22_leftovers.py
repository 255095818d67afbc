"""What the last new-user trial of issue 22 still found: scan's missing-path line, a binary x.py and the
findings exit code.  Torch-free."""

from __future__ import annotations

import json
import os
import re

import pytest

from tests.cli_util import run_cli

CUDA_SRC = "import torch\nx = torch.randn(2).cuda()\n"


# ----------------------------------------------------------------------------- a missing path: one line, as migrate's
@pytest.mark.parametrize("cmd", ["scan", "fix"])
def test_scan_and_fix_missing_path_line_is_migrates(tmp_path, cmd):
    missing = str(tmp_path / "nonexistent")
    r = run_cli(cmd, missing)
    m = run_cli("migrate", missing)
    assert r.code == m.code == 2 and r.out == ""
    assert r.err == m.err == f"ascendify: error: {missing}: no such file or folder\n"


def test_a_missing_path_beside_a_real_one_is_an_error_line_too(tmp_path):
    (tmp_path / "a.py").write_text(CUDA_SRC)
    missing = str(tmp_path / "gone.py")
    r = run_cli("scan", "--no-cache", str(tmp_path / "a.py"), missing)
    assert r.code == 1 and f"ascendify: error: {missing}: no such file or folder\n" in r.err


def test_a_loop_inside_a_folder_is_no_error_line(tmp_path):
    """The walk's notes (a link loop it did not follow) are not errors of a path the user gave."""
    d = tmp_path / "proj"
    (d / "sub").mkdir(parents=True)
    (d / "sub" / "a.py").write_text(CUDA_SRC)
    os.symlink(str(d), str(d / "sub" / "up"))
    r = run_cli("scan", "--no-cache", str(d))
    loop = [ln for ln in r.err.splitlines() if "symlink loop" in ln]
    assert loop and not any(ln.startswith("ascendify: error:") for ln in loop), r.err


# ----------------------------------------------------------------------------- a skipped file is a note, not an error
@pytest.mark.parametrize("name, data", [("x.py", b"ab\x00\xff\xfe"), ("u.py", b"x = '\xff\xfe'\n"), ("n.ipynb", b'{"cells": [')])
def test_a_file_never_read_as_python_sets_no_findings_exit_code(tmp_path, name, data):
    (tmp_path / name).write_bytes(data)
    r = run_cli("scan", "--no-cache", str(tmp_path), "--format", "json")
    doc = json.loads(r.out)
    assert r.code == 0, r.err
    assert [(f["code"][:3], f["severity"]) for f in doc["findings"]] == [("SYN", "info")]
    assert doc["summary"]["files"][0]["effort"] == "skipped"
    text = run_cli("scan", "--no-cache", str(tmp_path))
    assert text.code == 0 and "1 info." in text.out and "error" not in text.out.split("Found", 1)[1].split("\n")[0]
    assert run_cli("scan", "--no-cache", str(tmp_path), "--fail-on", "info").code == 1  # still a finding to see


def test_a_syntax_error_or_cuda_code_beside_it_still_fails(tmp_path):
    (tmp_path / "x.py").write_bytes(b"ab\x00\xff\xfe")
    (tmp_path / "py2.py").write_text('print "hello"\n')
    r = run_cli("scan", "--no-cache", str(tmp_path), "--format", "json")
    assert r.code == 1 and {(f["code"], f["severity"]) for f in json.loads(r.out)["findings"]} == {("SYN003", "info"), ("SYN001", "error")}
    (tmp_path / "py2.py").write_text(CUDA_SRC)
    assert run_cli("scan", "--no-cache", str(tmp_path)).code == 1


# ----------------------------------------------------------------------------- doctor, rules, profile at 80 columns
WIDTH = 80


def _squeezed(text: str) -> str:
    return "".join(text.split())


WIDE_COMMANDS = [
    ("doctor", "--root", "{empty}"),
    ("doctor", "--root", "examples/doctor_host", "-v"),
    ("doctor", "--root", "examples/doctor_host", "--npu-smi", "examples/doctor_host/npu-smi-info.txt",
     "--env-file", "examples/doctor_host/env.txt", "-v"),
    ("rules",),
    ("profile", "examples/profile_sample"),
]


@pytest.mark.parametrize("args", WIDE_COMMANDS, ids=["doctor-no-stack", "doctor-v", "doctor-host", "rules", "profile"])
def test_text_reports_fit_80_columns_and_lose_nothing(tmp_path, monkeypatch, args):
    args = [a.format(empty=str(tmp_path)) for a in args]
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    narrow = run_cli(*args)
    wide = [ln for ln in narrow.out.splitlines() if len(ln) > WIDTH]
    assert not wide, wide[:3]
    monkeypatch.setenv("COLUMNS", "2000")
    full = run_cli(*args)
    assert narrow.code == full.code
    assert max(len(ln) for ln in full.out.splitlines()) > WIDTH  # there was something to wrap
    assert _squeezed(narrow.out) == _squeezed(full.out)  # only line breaks and indents differ


def test_rules_wrapped_lines_keep_one_rule_per_code_line(monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    out = run_cli("rules").out.splitlines()
    starts = [ln for ln in out if ln.startswith("  ") and ln.split()[0][:3].isalpha() and ln.split()[0][3:].isdigit()]
    from ascendify.rules.registry import load_rules

    assert [ln.split()[0] for ln in starts] == list(load_rules())
    assert all(ln.startswith(" " * 21) for ln in out if ln.startswith("   ") and ln not in starts)  # under the name


def test_doctor_check_columns_stay_aligned_when_wrapped(monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    out = run_cli("doctor", "--root", "examples/doctor_host", "-v").out.splitlines()
    starts = {re.match(r"\[.{4}\] \S+ +", ln).end() for ln in out if ln.startswith("[")}
    assert len(starts) == 1, starts  # every check's text starts in one column, wrapped or not
    col = starts.pop()
    more = [ln for ln in out if ln.startswith(" " * 8) and not ln.strip().startswith(("fix:", "expected:", "source:"))]
    assert more and all(len(ln) - len(ln.lstrip()) >= col for ln in more), more  # continuations under the text


def test_profile_compare_fits_80_columns(tmp_path, monkeypatch):
    from tests.profile.test_compare import gpu_trace, npu_dir

    monkeypatch.setenv("COLUMNS", str(WIDTH))
    r = run_cli("profile", "compare", gpu_trace(tmp_path / "gpu.json"), npu_dir(tmp_path))
    assert r.code == 0 and not [ln for ln in r.out.splitlines() if len(ln) > WIDTH], r.out
    assert re.search(r"^aten::softmax +1 +10\.0 +1 +35\.0 +3\.50× +\+25\.0$", r.out, re.M), r.out
    monkeypatch.setenv("COLUMNS", "40")
    r = run_cli("profile", "compare", gpu_trace(tmp_path / "gpu2.json"), npu_dir(tmp_path / "b"))
    assert not [ln for ln in r.out.splitlines() if len(ln) > 40], r.out
    assert "aten::softmax — GPU calls 1 · GPU 10.0" in r.out
