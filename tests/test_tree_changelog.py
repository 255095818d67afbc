"""The change log names both lines of every entry: ``source_line`` in the original file and
``migrated_line`` in the migrated copy, for changes and remaining findings alike (issue 11)."""

from __future__ import annotations

import csv
import json

import pytest

from .cli_util import run_cli

# the agnostic fixes add lines after line 1 (a blank line and the DEVICE_TYPE prelude), moving
# every later line down; the npu ones add none (torch_npu 2.7.1 loads itself: no `import torch_npu`)
SRC = (
    "import torch\n"                                # 1
    "\n"                                            # 2
    "model = torch.nn.Linear(2, 2).cuda()\n"        # 3  DEV001, fixed
    'torch.cuda.nvtx.range_push("step")\n'          # 4  DEV014, no fix
    'state = torch.load("ckpt.pt")\n'               # 5  DEV017, unsafe fix: left
)


CODES = ("DEV001", "DEV014", "DEV017")


def _fix(tmp_path, *extra):
    # IMP too: whichever rule adds `import torch_npu` for the `.npu()` of DEV001
    r = run_cli("fix", "proj", "--output", "out", "--select", ",".join(CODES) + ",IMP", "--no-cache", "-j", "1", *extra,
                cwd=str(tmp_path))
    assert "Traceback" not in r.err and "internal error" not in r.err, r.err
    return json.loads((tmp_path / "out" / "ascendify-changes.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("target,fixed_code", [("npu", ".npu()"), ("agnostic", ".to(DEVICE_TYPE)")])
def test_every_entry_has_source_and_migrated_line(tmp_path, target, fixed_code):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "t.py").write_text(SRC)
    log = _fix(tmp_path, "--target", target)
    old = SRC.splitlines()
    new = (tmp_path / "out" / "t.py").read_text().splitlines()
    shift = len(new) - len(old)  # lines the fixes add above line 3 (the DEVICE_TYPE prelude)
    assert new[2 + shift:] == [old[2].replace(".cuda()", fixed_code)] + old[3:]
    assert shift == {"npu": 0, "agnostic": 2}[target]  # agnostic: source and migrated lines differ
    [change] = [c for c in log["changes"] if c["code"] in CODES]
    assert (change["code"], change["source_line"], change["migrated_line"]) == ("DEV001", 3, 3 + shift)
    got = {(f["code"], f["source_line"], f["migrated_line"]) for f in log["remaining"] if f["code"] in CODES}
    # DEV014 was found in the source, DEV017 in the fixed text: both entries say both lines
    assert got == {("DEV014", 4, 4 + shift), ("DEV017", 5, 5 + shift)}
    dev017 = next(f for f in log["remaining"] if f["code"] == "DEV017")
    assert dev017["line"] == 5 + shift  # found in the migrated text; its own `line` is that one
    rows = list(csv.DictReader(open(tmp_path / "out" / "ascendify-changes.csv", encoding="utf-8")))
    assert [(r["code"], r["start_line"], r["source_line"], r["migrated_line"]) for r in rows if r["code"] in CODES] == [("DEV001", "3", "3", str(3 + shift))]


def test_with_unsafe_fixes_every_change_has_both_lines(tmp_path):
    """--unsafe-fixes: the DEV017 fix goes in too; its lines are still the source's and the copy's."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "t.py").write_text(SRC)
    log = _fix(tmp_path, "--unsafe-fixes")
    old = SRC.splitlines()
    new = (tmp_path / "out" / "t.py").read_text().splitlines()
    by_code = {c["code"]: c for c in log["changes"] if c["code"] in CODES}
    assert set(by_code) == {"DEV001", "DEV017"}
    assert by_code["DEV017"]["source_line"] == 5 and "torch.load" in new[by_code["DEV017"]["migrated_line"] - 1]
    assert "map_location" in new[by_code["DEV017"]["migrated_line"] - 1]
    assert by_code["DEV001"]["source_line"] == 3 and ".npu()" in new[by_code["DEV001"]["migrated_line"] - 1]
    [manual] = [f for f in log["remaining"] if f["code"] in CODES]
    assert old[manual["source_line"] - 1] == new[manual["migrated_line"] - 1] == 'torch.cuda.nvtx.range_push("step")'


def test_unchanged_files_have_equal_lines(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "t.py").write_text('import torch\ntorch.cuda.nvtx.range_push("x")\n')
    log = _fix(tmp_path)
    assert log["changes"] == []
    assert [(f["code"], f["source_line"], f["migrated_line"]) for f in log["remaining"] if f["code"] in CODES] == [("DEV014", 2, 2)]


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
    shift = len(new_cells[0]) - len(old_cells[0])  # no line added (no `import torch_npu` for 2.7.1)
    assert shift == 0 and len(new_cells[1]) == len(old_cells[1])
    changes = sorted((c["cell"], c["code"], c["source_line"], c["migrated_line"]) for c in log["changes"] if c["code"] in CODES)
    assert changes == [(1, "DEV001", 2, 2 + shift), (2, "DEV001", 1, 1)]
    for cell, _code, s, m in changes:
        assert ".cuda()" in old_cells[cell - 1][s - 1] and ".npu()" in new_cells[cell - 1][m - 1]
    remaining = sorted((f["cell"], f["code"], f["source_line"], f["migrated_line"]) for f in log["remaining"] if f["code"] in CODES)
    assert remaining == [(1, "DEV014", 3, 3 + shift), (2, "DEV017", 2, 2)]
    for cell, _code, s, m in remaining:
        assert old_cells[cell - 1][s - 1] == new_cells[cell - 1][m - 1]
