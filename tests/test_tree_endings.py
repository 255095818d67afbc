"""Line endings survive every fix mode: CR, CRLF, LF, mixed, with or without one at EOF (issue 11)."""

from __future__ import annotations

import pytest

from .cli_util import run_cli

LINES = ["import torch", "", "model = torch.nn.Linear(2, 2).cuda()  # keep me", "x = 1"]


def _join(lines, seps, last):
    """``lines`` joined by ``seps`` (cycled), ending with ``last`` ('' for none)."""
    out = ""
    for i, ln in enumerate(lines[:-1]):
        out += ln + seps[i % len(seps)]
    return out + lines[-1] + last


# (name, separators between lines, separator at EOF)
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


@pytest.fixture
def fixed_lines(tmp_path_factory):
    """The fixed file's lines, learnt from the plain-LF file (the fix may or may not add
    ``import torch_npu`` after line 1; nothing else moves)."""
    d = tmp_path_factory.mktemp("lf")
    (d / "t.py").write_text("\n".join(LINES) + "\n")
    run_cli("fix", "t.py", "--select", "DEV001", "--write", "--no-cache", cwd=str(d))
    lines = (d / "t.py").read_text().split("\n")[:-1]
    assert lines[-2:] == ["model = torch.nn.Linear(2, 2).npu()  # keep me", "x = 1"] and len(lines) in (4, 5)
    return lines


def _expected(fixed_lines, seps, last):
    # each line keeps its ending; an added import takes the ending of line 1, which it follows
    src_seps = [seps[i % len(seps)] for i in range(len(LINES) - 1)]
    fixed_seps = src_seps if len(fixed_lines) == len(LINES) else [src_seps[0]] + src_seps
    return _join(fixed_lines, fixed_seps, last)


@pytest.mark.parametrize("name,seps,last", CASES, ids=[c[0] for c in CASES])
def test_fix_write_keeps_line_endings(tmp_path, fixed_lines, name, seps, last):
    p = tmp_path / f"{name}.py"
    p.write_bytes(_join(LINES, seps, last).encode())
    r = run_cli("fix", p.name, "--select", "DEV001", "--write", "--no-cache", cwd=str(tmp_path))
    assert "Traceback" not in r.err and "fixed 1 finding(s) in 1 file(s)" in r.err, r.err
    assert p.read_bytes() == _expected(fixed_lines, seps, last).encode()
    # a second run changes nothing
    r = run_cli("fix", p.name, "--select", "DEV001", "--write", "--no-cache", cwd=str(tmp_path))
    assert "fixed 0 finding(s)" in r.err and p.read_bytes() == _expected(fixed_lines, seps, last).encode()


@pytest.mark.parametrize("name,seps,last", CASES, ids=[c[0] for c in CASES])
def test_fix_output_keeps_line_endings(tmp_path, fixed_lines, name, seps, last):
    (tmp_path / "proj").mkdir()
    p = tmp_path / "proj" / f"{name}.py"
    original = _join(LINES, seps, last).encode()
    p.write_bytes(original)
    r = run_cli("fix", "proj", "--select", "DEV001", "--out-dir", "out", "--no-cache", cwd=str(tmp_path))
    assert r.code == 0, r.err
    assert (tmp_path / "out" / p.name).read_bytes() == _expected(fixed_lines, seps, last).encode()
    assert p.read_bytes() == original


def test_cr_only_diff_is_a_readable_unified_diff(tmp_path):
    p = tmp_path / "cr.py"
    p.write_bytes(_join(LINES, ["\r"], "\r").encode())
    r = run_cli("fix", "cr.py", "--select", "DEV001", "--no-cache", cwd=str(tmp_path))
    assert "-model = torch.nn.Linear(2, 2).cuda()  # keep me\n+model = torch.nn.Linear(2, 2).npu()  # keep me\n" in r.out
    assert "No newline at end of file" not in r.out
    assert p.read_bytes() == _join(LINES, ["\r"], "\r").encode()
