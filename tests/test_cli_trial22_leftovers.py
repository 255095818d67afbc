"""What the last new-user trial of issue 22 still found: scan's missing-path line, a binary x.py and the
findings exit code.  Torch-free."""

from __future__ import annotations

import json
import os

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
