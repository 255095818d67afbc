"""Line endings survive every fix mode: CR, CRLF, LF, mixed, with or without one at EOF (issue 11)."""

from __future__ import annotations

import pytest

from .cli_util import run_cli

LINES = ["import torch", "", "model = torch.nn.Linear(2, 2).cuda()  # keep me", "x = 1"]
FIXED = ["import torch", "import torch_npu", "", "model = torch.nn.Linear(2, 2).npu()  # keep me", "x = 1"]


def _join(lines, seps, last):
    """``lines`` joined by ``seps`` (cycled), ending with ``last`` ('' for none)."""
    out = ""
    for i, ln in enumerate(lines[:-1]):
        out += ln + seps[i % len(seps)]
    return out + lines[-1] + last


# (name, separators between lines, separator at EOF); the fixed file has one more line,
# the added import, which takes the line ending of the line it follows
CASES = [
    ("lf", ["\n"], "\n"),
    ("crlf", ["\r\n"], "\r\n"),
    ("cr", ["\r"], "\r"),
    ("cr_no_eol", ["\r"], ""),
    ("crlf_no_eol", ["\r\n"], ""),
    ("lf_no_eol", ["\n"], ""),
    ("mixed_cr_at_eof", ["\n"], "\r"),
    ("mixed_crlf_lf", ["\r\n", "\n", "\r\n"], "\n"),
]


def _expected(seps, last):
    # the import goes after line 1, with line 1's ending; the rest keep theirs
    fixed_seps = [seps[0]] + [seps[i % len(seps)] for i in range(len(LINES) - 1)]
    return _join(FIXED, fixed_seps, last)


@pytest.mark.parametrize("name,seps,last", CASES, ids=[c[0] for c in CASES])
def test_fix_write_keeps_line_endings(tmp_path, name, seps, last):
    p = tmp_path / f"{name}.py"
    p.write_bytes(_join(LINES, seps, last).encode())
    r = run_cli("fix", p.name, "--select", "DEV001", "--write", "--no-cache", cwd=str(tmp_path))
    assert "Traceback" not in r.err and "fixed 1 finding(s) in 1 file(s)" in r.err, r.err
    assert p.read_bytes() == _expected(seps, last).encode()
    # a second run changes nothing
    r = run_cli("fix", p.name, "--select", "DEV001", "--write", "--no-cache", cwd=str(tmp_path))
    assert "fixed 0 finding(s)" in r.err and p.read_bytes() == _expected(seps, last).encode()


@pytest.mark.parametrize("name,seps,last", CASES, ids=[c[0] for c in CASES])
def test_fix_output_keeps_line_endings(tmp_path, name, seps, last):
    (tmp_path / "proj").mkdir()
    p = tmp_path / "proj" / f"{name}.py"
    original = _join(LINES, seps, last).encode()
    p.write_bytes(original)
    r = run_cli("fix", "proj", "--select", "DEV001", "--output", "out", "--no-cache", cwd=str(tmp_path))
    assert r.code == 0, r.err
    assert (tmp_path / "out" / p.name).read_bytes() == _expected(seps, last).encode()
    assert p.read_bytes() == original


def test_cr_only_diff_is_a_readable_unified_diff(tmp_path):
    p = tmp_path / "cr.py"
    p.write_bytes(_join(LINES, ["\r"], "\r").encode())
    r = run_cli("fix", "cr.py", "--select", "DEV001", "--no-cache", cwd=str(tmp_path))
    assert "+import torch_npu\n" in r.out
    assert "-model = torch.nn.Linear(2, 2).cuda()  # keep me\n+model = torch.nn.Linear(2, 2).npu()  # keep me\n" in r.out
    assert "No newline at end of file" not in r.out
    assert p.read_bytes() == _join(LINES, ["\r"], "\r").encode()
