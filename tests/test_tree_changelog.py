"""The change log names both lines of every entry: ``source_line`` in the original file and
``migrated_line`` in the migrated copy, for changes and remaining findings alike (issue 11)."""

from __future__ import annotations

import csv
import json

from .cli_util import run_cli

# the fix adds `import torch_npu` after line 1, so every later line moves down by one
SRC = (
    "import torch\n"                                # 1
    "\n"                                            # 2
    "model = torch.nn.Linear(2, 2).cuda()\n"        # 3  DEV001, fixed
    'torch.cuda.nvtx.range_push("step")\n'          # 4  DEV014, no fix
    'state = torch.load("ckpt.pt")\n'               # 5  DEV017, unsafe fix: left
)


def _fix(tmp_path, *extra):
    r = run_cli("fix", "proj", "--output", "out", "--select", "DEV001,DEV014,DEV017", "--no-cache", "-j", "1", *extra,
                cwd=str(tmp_path))
    assert "Traceback" not in r.err and "internal error" not in r.err, r.err
    return json.loads((tmp_path / "out" / "ascendify-changes.json").read_text(encoding="utf-8"))


def test_every_entry_has_source_and_migrated_line(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "t.py").write_text(SRC)
    log = _fix(tmp_path)
    old = SRC.splitlines()
    new = (tmp_path / "out" / "t.py").read_text().splitlines()
    assert new[1] == "import torch_npu"
    [change] = log["changes"]
    assert (change["code"], change["source_line"], change["migrated_line"]) == ("DEV001", 3, 4)
    assert ".cuda()" in old[change["source_line"] - 1] and ".npu()" in new[change["migrated_line"] - 1]
    got = {(f["code"], f["source_line"], f["migrated_line"]) for f in log["remaining"]}
    # DEV014 was found in the source (line 4), DEV017 in the fixed text (line 6): both say both
    assert got == {("DEV014", 4, 5), ("DEV017", 5, 6)}
    for f in log["remaining"]:
        assert old[f["source_line"] - 1] == new[f["migrated_line"] - 1]
    rows = list(csv.DictReader(open(tmp_path / "out" / "ascendify-changes.csv", encoding="utf-8")))
    assert [(r["code"], r["start_line"], r["source_line"], r["migrated_line"]) for r in rows] == [("DEV001", "3", "3", "4")]


def test_unchanged_files_have_equal_lines(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "t.py").write_text('import torch\ntorch.cuda.nvtx.range_push("x")\n')
    log = _fix(tmp_path)
    assert log["changes"] == []
    assert [(f["code"], f["source_line"], f["migrated_line"]) for f in log["remaining"]] == [("DEV014", 2, 2)]


def test_notebook_lines_are_lines_of_the_cell(tmp_path):
    nb = {
        "nbformat": 4, "nbformat_minor": 5, "metadata": {},
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# title"]},
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
             "source": ["import torch\n", "x = torch.ones(1).cuda()\n", 'torch.cuda.nvtx.range_push("a")']},
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
             "source": ["y = x.cuda()\n", 'state = torch.load("c.pt")']},
        ],
    }
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "nb.ipynb").write_text(json.dumps(nb))
    log = _fix(tmp_path)
    fixed = json.loads((tmp_path / "out" / "nb.ipynb").read_text())
    new_cells = ["".join(c["source"]).splitlines() for c in fixed["cells"] if c["cell_type"] == "code"]
    old_cells = ["".join(c["source"]).splitlines() for c in nb["cells"] if c["cell_type"] == "code"]
    assert new_cells[0][1] == "import torch_npu"
    changes = sorted((c["cell"], c["code"], c["source_line"], c["migrated_line"]) for c in log["changes"])
    assert changes == [(1, "DEV001", 2, 3), (2, "DEV001", 1, 1)]
    remaining = sorted((f["cell"], f["code"], f["source_line"], f["migrated_line"]) for f in log["remaining"])
    assert remaining == [(1, "DEV014", 3, 4), (2, "DEV017", 2, 2)]
    for cell, _code, s, m in remaining:
        assert old_cells[cell - 1][s - 1] == new_cells[cell - 1][m - 1]
