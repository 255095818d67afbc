"""Bad input: each problem is one finding with a parse-error code; the scan goes on; no traceback."""

from __future__ import annotations

import json
import os
import sys

import pytest

from ascendify.scan import source as source_mod

from .cli_util import run_cli

CUDA = "import torch\nm = torch.nn.Linear(1, 1).cuda()\n"


def scan_json(tmp_path, *extra):
    r = run_cli("scan", ".", "--select", "SYN,DEV001", "--format", "json", *extra, cwd=str(tmp_path))
    assert "Traceback" not in r.err
    return r, {(f["path"], f["code"]): f for f in json.loads(r.out)["findings"]}


def test_each_bad_file_is_one_finding_and_scan_goes_on(tmp_path):
    (tmp_path / "good.py").write_text(CUDA)
    (tmp_path / "py2.py").write_text('print "hello"\n')
    (tmp_path / "half.py").write_text("def f(:\n")
    (tmp_path / "binary.py").write_bytes(b"\x00\x01\x02ELF")
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "badbytes.py").write_bytes(b"x = '\xff\xfe'\n")
    (tmp_path / "gbk.py").write_bytes("# -*- coding: gbk -*-\nimport torch\n# 模型\nm = torch.nn.Linear(1, 1).cuda()\n".encode("gbk"))
    (tmp_path / "big.py").write_bytes(b"# x\n" * (5 * 1024 * 1024 // 4 + 10))
    (tmp_path / "broken.ipynb").write_text('{"cells": [')
    r, by = scan_json(tmp_path)
    assert r.code == 1
    assert by[("py2.py", "SYN001")]["line"] == 1 and "Python 2" in by[("py2.py", "SYN001")]["message"]
    assert by[("half.py", "SYN001")]["line"] == 1
    assert "binary file" in by[("binary.py", "SYN003")]["message"]
    assert by[("badbytes.py", "SYN002")]["line"] == 1
    assert "5 MB" in by[("big.py", "SYN003")]["message"]
    assert "Jupyter" in by[("broken.ipynb", "SYN004")]["message"]
    # the PEP 263 file decodes and is analysed; the good file too
    assert by[("gbk.py", "DEV001")]["line"] == 4
    assert by[("good.py", "DEV001")]["line"] == 2
    assert not any(p == "empty.py" for p, _ in by)


NEWER_SYNTAX = [
    # (first Python with the syntax, what the hint names, file with a .cuda() call on line 3)
    ((3, 10), "`match` statement needs Python 3.10+", "import torch\nmatch 1:\n    case 1: m = torch.nn.Linear(1, 1).cuda()\n"),
    ((3, 11), "`except*` needs Python 3.11+", "import torch\ntry: pass\nexcept* ValueError: m = torch.nn.Linear(1, 1).cuda()\n"),
    ((3, 12), "`type` statement needs Python 3.12+", "import torch\ntype Alias = list[int]\nm = torch.nn.Linear(1, 1).cuda()\n"),
    ((3, 12), "type parameters (PEP 695) needs Python 3.12+", "import torch\ndef f[T](x: T) -> T: return x\nm = torch.nn.Linear(1, 1).cuda()\n"),
]


@pytest.mark.parametrize("since,hint,text", NEWER_SYNTAX, ids=["match", "except-star", "type-stmt", "type-params"])
def test_syntax_newer_than_the_running_python(tmp_path, since, hint, text):
    """A file valid for a newer Python: analysed where this Python can parse it, else one SYN001 that says why."""
    (tmp_path / "new.py").write_text(text)
    (tmp_path / "good.py").write_text(CUDA)
    r, by = scan_json(tmp_path)
    assert r.code == 1 and by[("good.py", "DEV001")]["line"] == 2
    if sys.version_info[:2] >= since:
        assert by[("new.py", "DEV001")]["line"] == 3 and ("new.py", "SYN001") not in by
    else:
        msg = by[("new.py", "SYN001")]["message"]
        assert hint in msg and f"runs on Python {sys.version_info[0]}.{sys.version_info[1]}" in msg
        assert ("new.py", "DEV001") not in by


def test_really_broken_file_gets_no_newer_python_hint(tmp_path):
    (tmp_path / "broken.py").write_text("x = = 1\n")
    r, by = scan_json(tmp_path)
    assert r.code == 1 and by[("broken.py", "SYN001")]["message"] == "syntax error: invalid syntax"


def test_cache_is_per_python_version(tmp_path, monkeypatch):
    """``ast`` differs between Pythons, so one Python's cached findings are never another's."""
    from ascendify.config import Settings
    from ascendify.scan import engine

    a = str(tmp_path / "a.py")
    key = engine.Cache(str(tmp_path), Settings()).key(b"x = 1\n", "a.py", a)
    monkeypatch.setattr(engine.sys, "version_info", (3, sys.version_info[1] + 1, 0, "final", 0))
    other = engine.Cache(str(tmp_path), Settings()).key(b"x = 1\n", "a.py", a)
    assert key != other and len(key) == len(other) == 64


def test_symlink_loop_and_broken_link(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(CUDA)
    os.symlink("..", tmp_path / "pkg" / "loop")
    os.symlink("nowhere.py", tmp_path / "pkg" / "dangling.py")
    r, by = scan_json(tmp_path)
    assert list(by) == [("pkg/a.py", "DEV001")]
    assert "symlink loop" in r.err and "broken symlink" in r.err


def test_unreadable_file(tmp_path, monkeypatch):
    (tmp_path / "secret.py").write_text(CUDA)
    real_open = open

    def fake_open(path, *a, **k):
        if str(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr(source_mod, "open", fake_open, raising=False)
    r, by = scan_json(tmp_path, "--no-cache", "-j", "1")
    assert "Permission denied" in by[("secret.py", "SYN003")]["message"]


def test_notebook_cells_and_magics(tmp_path):
    nb = {
        "nbformat": 4, "nbformat_minor": 5, "metadata": {},
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# title\n"]},
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": ["%matplotlib inline\n", "import torch\n"]},
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": ["x = torch.ones(2)\n", "!nvidia-smi\n", "y = x.cuda()"]},
        ],
    }
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    r = run_cli("scan", "nb.ipynb", "--select", "DEV001", cwd=str(tmp_path))
    assert r.out.splitlines()[0] == "nb.ipynb:cell 2:3:7: DEV001 [*] `.cuda()` moves to a CUDA device; on Ascend use `.npu()`"
    r = run_cli("scan", "nb.ipynb", "--select", "DEV001", "--format", "json", cwd=str(tmp_path))
    f = json.loads(r.out)["findings"][0]
    assert (f["cell"], f["cell_line"]) == (2, 3)


def test_syntax_error_in_notebook_cell(tmp_path):
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": "import torch"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": "def f(:\n  pass"}]}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    r = run_cli("scan", "nb.ipynb", cwd=str(tmp_path))
    assert r.out.startswith("nb.ipynb:cell 2:1:") and "SYN001" in r.out and "(cell 2, line 1)" in r.out


def test_internal_error_is_one_line(tmp_path, monkeypatch):
    from ascendify.scan import engine

    def boom(*a, **k):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(engine, "discover", boom)
    monkeypatch.setattr("ascendify.scan.cli.discover", boom)
    r = run_cli("scan", ".", cwd=str(tmp_path))
    assert r.code == 2 and r.err.strip() == "ascendify: internal error: RuntimeError: kaboom (please report it; rerun with ASCENDIFY_DEBUG=1 for the traceback)"


def test_undecodable_bytes_on_the_first_two_lines_say_what_to_do(tmp_path):
    """A file with no coding line whose first line is not UTF-8 (GBK text, the SYN002 page's
    example) gets the same advice as one whose bad bytes are further down, not Python's
    'invalid or missing encoding declaration' (it has no declaration to fix)."""
    (tmp_path / "first.py").write_bytes('print("开始训练")\n'.encode("gbk"))
    (tmp_path / "later.py").write_bytes('import torch\n\nprint("开始训练")\n'.encode("gbk"))
    (tmp_path / "cookie.py").write_bytes(b"# -*- coding: nosuch -*-\nx = 1\n")
    _r, by = scan_json(tmp_path)
    for name, line in (("first.py", 1), ("later.py", 3)):
        f = by[(name, "SYN002")]
        assert (f["line"], f["message"]) == (line, "cannot decode as utf-8: invalid start byte; add a PEP 263 coding cookie or re-save as UTF-8")
    assert by[("cookie.py", "SYN002")]["message"] == "bad encoding declaration: unknown encoding: nosuch"
