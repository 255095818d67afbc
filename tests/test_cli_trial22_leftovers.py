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
