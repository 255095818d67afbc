"""`ascendify fix`: diff by default, --write in place, --out-dir copy; nothing lost."""

from __future__ import annotations

import csv
import json
import os
import stat

import pytest

from ascendify.fix import apply as apply_mod

from .cli_util import run_cli

SRC = "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()  # keep me\n"
FIXED = "import torch\nimport torch_npu\n\nmodel = torch.nn.Linear(2, 2).npu()  # keep me\n"


# torch_npu 2.4.0 is not auto-loaded by `import torch` (autoload starts with 2.5.1), so the fixes
# here insert `import torch_npu`: these tests check that multi-line edit too.
OLD = ("--torch-npu", "2.4.0")


def fix(tmp_path, *args):
    r = run_cli("fix", *args, "--select", "DEV001", *OLD, cwd=str(tmp_path))
    assert "Traceback" not in r.err, r.err
    return r


def test_default_prints_diff_and_writes_nothing(tmp_path):
    p = tmp_path / "t.py"
    p.write_text(SRC)
    r = fix(tmp_path, "t.py")
    assert p.read_text() == SRC
    assert "--- a/t.py\n+++ b/t.py\n" in r.out
    assert "-model = torch.nn.Linear(2, 2).cuda()  # keep me\n+model = torch.nn.Linear(2, 2).npu()  # keep me\n" in r.out
    assert "+import torch_npu\n" in r.out
    assert "would fix 1 finding(s) in 1 file(s)" in r.err


def test_write_in_place_keeps_mode_and_is_idempotent(tmp_path):
    p = tmp_path / "t.py"
    p.write_text(SRC)
    os.chmod(p, 0o754)
    r = fix(tmp_path, "t.py", "--write")
    assert r.code == 0
    assert p.read_text() == FIXED
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o754
    r = fix(tmp_path, "t.py", "--write")
    assert p.read_text() == FIXED and "fixed 0 finding(s) in 0 file(s)" in r.err
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_crlf_bom_and_encoding_cookie_kept(tmp_path):
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(SRC.replace("\n", "\r\n").encode())
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + SRC.encode())
    latin = tmp_path / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n# caf\xe9\n" + SRC).encode("latin-1"))
    fix(tmp_path, ".", "--write")
    assert crlf.read_bytes() == FIXED.replace("\n", "\r\n").encode()
    assert bom.read_bytes() == b"\xef\xbb\xbf" + FIXED.encode()
    assert latin.read_bytes() == ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + FIXED).encode("latin-1")


def test_output_copies_tree_and_writes_changelog(tmp_path):
    proj = tmp_path / "proj"
    (proj / "pkg").mkdir(parents=True)
    (proj / "pkg" / "m.py").write_text(SRC)
    (proj / "README.md").write_text("hello\n")
    (proj / "data.bin").write_bytes(b"\x00\x01")
    out = tmp_path / "out"
    r = fix(tmp_path, "proj", "--out-dir", "out")
    assert (proj / "pkg" / "m.py").read_text() == SRC  # original untouched
    assert (out / "pkg" / "m.py").read_text() == FIXED
    assert (out / "README.md").read_text() == "hello\n" and (out / "data.bin").read_bytes() == b"\x00\x01"
    rows = list(csv.DictReader(open(out / "ascendify-changes.csv")))
    assert [(r["file"], r["start_line"], r["code"], r["operation"], r["safe"]) for r in rows] == [
        (os.path.join("proj", "pkg", "m.py"), "3", "DEV001", "replace .cuda() with .npu()", "True")]
    log = json.load(open(out / "ascendify-changes.json"))
    assert log["changes"][0]["code"] == "DEV001" and log["remaining"] == []
    assert "migrated copy: out" in r.err


def test_output_refuses_the_input_folder(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "m.py").write_text(SRC)
    r = run_cli("fix", "proj", "--out-dir", "proj", *OLD, cwd=str(tmp_path))
    assert r.code == 2 and "must differ from the input" in r.err
    # just the error, in one line: no "already exists ... files are kept" warning before it (issue 22)
    assert r.err.strip().splitlines() == ["ascendify: error: proj: the output folder must differ from the input (use --write to edit in place)"]
    r = run_cli("fix", "proj", "--out-dir", os.path.join(".", "proj", ""), *OLD, cwd=str(tmp_path))  # the same folder spelled otherwise
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1 and "must differ from the input" in r.err, r.err


def test_never_touches_files_outside_paths(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.py").write_text(SRC)
    (tmp_path / "b" / "y.py").write_text(SRC)
    fix(tmp_path, "a", "--write")
    assert (tmp_path / "a" / "x.py").read_text() == FIXED
    assert (tmp_path / "b" / "y.py").read_text() == SRC


def test_notebook_fix_keeps_magics_outputs_and_other_cells(tmp_path):
    nb = {
        "nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3"}},
        "cells": [
            {"cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": [{"output_type": "stream", "name": "stdout", "text": ["hi\n"]}],
             "source": ["%matplotlib inline\n", "import torch\n"]},
            {"cell_type": "markdown", "metadata": {}, "source": ["text"]},
            {"cell_type": "code", "metadata": {}, "execution_count": 2, "outputs": [], "source": ["m = torch.nn.Linear(1, 1).cuda()\n", "m"]},
        ],
    }
    p = tmp_path / "nb.ipynb"
    p.write_text(json.dumps(nb, indent=1))
    fix(tmp_path, "nb.ipynb", "--write")
    new = json.loads(p.read_text())
    assert new["cells"][0]["source"] == ["%matplotlib inline\n", "import torch\n", "import torch_npu"] or \
        new["cells"][0]["source"] == ["%matplotlib inline\n", "import torch\n", "import torch_npu\n"]
    assert new["cells"][0]["outputs"] == nb["cells"][0]["outputs"]
    assert new["cells"][1] == nb["cells"][1]
    assert new["cells"][2]["source"] == ["m = torch.nn.Linear(1, 1).npu()\n", "m"]
    assert new["metadata"] == nb["metadata"]


def test_rewrite_that_does_not_reparse_leaves_file_unchanged(tmp_path, monkeypatch):
    p = tmp_path / "t.py"
    p.write_text(SRC)

    monkeypatch.setattr(apply_mod, "_edit_ops", lambda edit, text, a, b: [(a, b, "1.npu")])
    r = run_cli("fix", "t.py", "--write", "--select", "DEV001", *OLD, cwd=str(tmp_path))
    assert p.read_text() == SRC
    assert "t.py:" in r.err and ("did not re-parse" in r.err or "cannot rewrite" in r.err)


def _raise(*_args):
    raise ValueError("no such node")


def test_rewrite_that_raises_is_reported_per_file(tmp_path, monkeypatch):
    p = tmp_path / "t.py"
    p.write_text(SRC)
    monkeypatch.setattr(apply_mod, "_edit_ops", _raise)
    r = run_cli("fix", "t.py", "--write", "--select", "DEV001", *OLD, cwd=str(tmp_path))
    assert p.read_text() == SRC
    assert "t.py: cannot rewrite" in r.err and "internal error" not in r.err
    assert "1 file(s) could not be rewritten (see above) and were left unchanged." in r.err


def test_file_with_empty_tuple_and_parenthesised_names_is_fixed(tmp_path):
    p = tmp_path / "t.py"
    p.write_text("import torch\n\nx = ()\ny = (x)\nm = torch.nn.Linear(1, 1).cuda()\n")
    r = fix(tmp_path, "t.py", "--write")
    assert "cannot rewrite" not in r.err
    assert p.read_text() == "import torch\nimport torch_npu\n\nx = ()\ny = (x)\nm = torch.nn.Linear(1, 1).npu()\n"


def test_output_into_existing_folder_warns_that_old_files_stay(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "m.py").write_text(SRC)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old.py").write_text("x = 1\n")
    r = fix(tmp_path, "proj", "--out-dir", "out")
    assert "ascendify: warning: out already exists; files in it that are not in the project are kept" in r.err
    assert (tmp_path / "out" / "old.py").read_text() == "x = 1\n" and (tmp_path / "out" / "m.py").read_text() == FIXED
    r = fix(tmp_path, "proj", "--out-dir", "fresh")
    assert "warning" not in r.err
