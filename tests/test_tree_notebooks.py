"""Notebooks are scanned and fixed cell by cell (issue 11, item 3).

Each code cell is parsed on its own, IPython syntax masked (line magics, ``!`` shell lines
with their ``\\`` continuations, ``x = !cmd``, cell magics whose body is not Python), names
resolve across cells in order, and a cell that does not parse is one SYN001 finding for that
cell while the other cells are still scanned and fixed.  The notebooks are written here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascendify.scan.source import SourceFile, read_notebook

from .cli_util import run_cli

OLD = ("--torch-npu", "2.4.0")  # torch_npu 2.4.0 is not auto-loaded: the fix inserts `import torch_npu`


def _nb(*cells) -> dict:
    """A notebook: each cell a code cell's text, or ``("md", text)`` for a markdown cell."""
    out = []
    for i, c in enumerate(cells):
        kind, text = c if isinstance(c, tuple) else ("code", c)
        cell = {"cell_type": kind, "id": f"c{i}", "metadata": {}, "source": text.splitlines(keepends=True)}
        if kind == "code":
            cell.update(execution_count=i, outputs=[{"output_type": "stream", "name": "stdout", "text": [f"out {i}\n"]}])
        out.append(cell)
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3"}}, "cells": out}


def _write(tmp_path, nb: dict, name: str = "nb.ipynb"):
    p = tmp_path / name
    p.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return p


def _scan(tmp_path, name: str = "nb.ipynb", *extra) -> list[tuple]:
    r = run_cli("scan", name, "--format", "json", "--no-cache", "-j", "1", *extra, cwd=str(tmp_path))
    assert "Traceback" not in r.err and "internal error" not in r.err, r.err
    return [(f["code"], f["cell"], f["cell_line"], f["message"]) for f in json.loads(r.out)["findings"]]


def _where(findings, *codes) -> list[tuple]:
    return sorted((c, cell, line) for c, cell, line, _ in findings if not codes or c in codes)


def _sources(p) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(p.read_text(encoding="utf-8"))["cells"]]


# ---------------------------------------------------------------------- line magics in blocks
ELIF_CELL = (
    "import torch\n"                          # 1
    "MODE = 'b'\n"                            # 2
    "if MODE == 'a':\n"                       # 3
    "    x = 1\n"                             # 4
    "elif MODE == 'b':\n"                     # 5
    "    %load_ext tensorboard\n"             # 6  the elif's whole body
    "else:\n"                                 # 7
    "    %tensorboard --logdir runs\n"        # 8
    "for i in range(2):\n"                    # 9
    "    !nvidia-smi\n"                       # 10
    "model = torch.nn.Linear(2, 2).cuda()\n"  # 11 DEV001
)


def test_block_whose_body_is_only_a_magic_still_parses(tmp_path):
    _write(tmp_path, _nb(("md", "# title"), ELIF_CELL, "y = torch.ones(1).cuda()\n"))
    got = _scan(tmp_path, "nb.ipynb", "--select", "DEV001,SYN")
    assert _where(got) == [("DEV001", 1, 11), ("DEV001", 2, 1)]


def test_fix_keeps_magics_in_blocks_as_written(tmp_path):
    p = _write(tmp_path, _nb(ELIF_CELL, "y = torch.ones(1).cuda()\n"))
    r = run_cli("fix", "nb.ipynb", "--write", "--select", "DEV001", "--no-cache", *OLD, cwd=str(tmp_path))
    assert "Traceback" not in r.err, r.err
    cells = _sources(p)
    want = ELIF_CELL.replace("import torch\n", "import torch\nimport torch_npu\n", 1).replace(".cuda()", ".npu()")
    assert cells == [want, "y = torch.ones(1).npu()\n"]


# ---------------------------------------------------------------------- shell lines
def test_shell_line_continuations_are_masked(tmp_path):
    nb = _nb(
        "!pip install -q -U \\\n"
        "    torch torchvision \\\n"
        "        numpy\n"
        "import torch\n"
        "files = !ls data\n"
        "%env CUDA_VISIBLE_DEVICES=0\n",
        "torch.cuda.synchronize()\n"
        "x = torch.ones(1).cuda()\n",
    )
    _write(tmp_path, nb)
    got = _scan(tmp_path, "nb.ipynb", "--select", "DEV001,SYN")
    assert _where(got) == [("DEV001", 2, 2)]


def test_magic_text_inside_a_string_is_not_masked():
    """A ``!`` or ``%`` at the start of a line inside a string or brackets is Python, not a magic."""
    import tempfile
    import os

    cell = 's = """\n!not a magic\n%neither\n"""\nt = (1,\n     2)\n'
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "nb.ipynb")
        with open(p, "w", encoding="utf-8") as fh:
            json.dump(_nb(cell), fh)
        src = read_notebook(p)
    assert isinstance(src, SourceFile)
    assert '"""\n!not a magic\n%neither\n"""' in src.text
    assert not src.cell_problems


# ---------------------------------------------------------------------- cell magics
def test_bash_cell_is_not_python_and_is_kept(tmp_path):
    bash = "%%bash\nif [ -d data ]; then\n  echo \"model.cuda()\"\nfi\n"
    p = _write(tmp_path, _nb("import torch\n", bash, "m = torch.nn.Linear(1, 1).cuda()\n"))
    got = _scan(tmp_path, "nb.ipynb", "--select", "DEV001,SYN")
    assert _where(got) == [("DEV001", 3, 1)]
    before = json.loads(p.read_text(encoding="utf-8"))
    r = run_cli("fix", "nb.ipynb", "--write", "--select", "DEV001", "--no-cache", *OLD, cwd=str(tmp_path))
    assert "Traceback" not in r.err, r.err
    after = json.loads(p.read_text(encoding="utf-8"))
    assert after["cells"][1] == before["cells"][1]
    assert _sources(p)[2] == "m = torch.nn.Linear(1, 1).npu()\n"


def test_capture_and_time_cells_are_python_after_the_first_line(tmp_path):
    capture = "%%capture out\nfor i in range(2):\n    !echo hi\nm = torch.nn.Linear(1, 1).cuda()\n"
    timed = "%%time\nwith torch.no_grad():\n    %time y = m(torch.ones(1, 1).cuda())\n"
    p = _write(tmp_path, _nb("import torch\n", capture, timed))
    got = _scan(tmp_path, "nb.ipynb", "--select", "DEV001,SYN")
    assert _where(got) == [("DEV001", 2, 4), ("DEV001", 3, 3)]
    r = run_cli("fix", "nb.ipynb", "--write", "--select", "DEV001", "--no-cache", *OLD, cwd=str(tmp_path))
    assert "Traceback" not in r.err, r.err
    assert _sources(p) == ["import torch\nimport torch_npu\n", capture.replace(".cuda()", ".npu()"),
                           timed.replace(".cuda()", ".npu()")]


# ---------------------------------------------------------------------- a broken cell
BROKEN = ("import torch as T\n",
          "def f(:\n    pass\n",
          ("md", "text"),
          "T.cuda.synchronize()\nm = T.nn.Linear(1, 1).cuda()\n")


def test_broken_cell_is_one_finding_and_other_cells_are_scanned(tmp_path):
    _write(tmp_path, _nb(*BROKEN))
    got = _scan(tmp_path, "nb.ipynb", "--select", "DEV001,DEV002,SYN")
    syn = [f for f in got if f[0] == "SYN001"]
    assert len(syn) == 1 and syn[0][1:3] == (2, 1) and "(cell 2, line 1)" in syn[0][3]
    # the alias `T` of cell 1 serves cell 3 (markdown cells are not counted)
    assert ("DEV001", 3, 2) in _where(got)
    assert all(cell != 2 for code, cell, _ in _where(got) if code != "SYN001")


def test_broken_cell_is_kept_and_the_others_fixed(tmp_path):
    p = _write(tmp_path, _nb(*BROKEN))
    before = json.loads(p.read_text(encoding="utf-8"))
    r = run_cli("fix", "nb.ipynb", "--write", "--select", "DEV001", "--no-cache", *OLD, cwd=str(tmp_path))
    assert "Traceback" not in r.err, r.err
    after = json.loads(p.read_text(encoding="utf-8"))
    assert after["cells"][1] == before["cells"][1] and after["cells"][2] == before["cells"][2]
    assert _sources(p)[0] == "import torch as T\nimport torch_npu\n"
    assert _sources(p)[3] == "T.cuda.synchronize()\nm = T.nn.Linear(1, 1).npu()\n"
    for a, b in zip(after["cells"], before["cells"]):
        assert a.get("outputs") == b.get("outputs") and a["metadata"] == b["metadata"]


def test_remaining_findings_name_the_cell_line_of_the_copy(tmp_path):
    """After a fix adds a line to cell 1, findings of the re-scan (unsafe fixes left) still name
    their own cell and line: the change log's remaining entries match a scan of the copy."""
    (tmp_path / "proj").mkdir()
    _write(tmp_path / "proj", _nb(
        "%matplotlib inline\nimport torch\n",
        "def f(:\n",
        "m = torch.nn.Linear(1, 1).cuda()\nstate = torch.load('c.pt')\n"))
    r = run_cli("fix", "proj", "--out-dir", "out", "--select", "DEV001,DEV017,IMP,SYN", "--no-cache", "-j", "1", *OLD,
                cwd=str(tmp_path))
    assert "Traceback" not in r.err, r.err
    log = json.loads((tmp_path / "out" / "ascendify-changes.json").read_text(encoding="utf-8"))
    remaining = sorted((f["code"], f["cell"], f["cell_line"]) for f in log["remaining"])
    rescan = _where(_scan(tmp_path / "out", "nb.ipynb", "--select", "DEV001,DEV017,IMP,SYN"))
    assert remaining == rescan == [("DEV017", 3, 2), ("SYN001", 2, 1)]


@pytest.mark.parametrize("cell", ["x = (1,\n", "%%bash\necho hi\n", "if True:\n  %time x\n", "%%capture\nif True:\n    !ls \\\n  | head\n"])
def test_every_cell_comes_back_as_written(tmp_path, cell):
    """Masking is undone exactly: odd cells around a fixed one come back byte for byte."""
    p = _write(tmp_path, _nb("import torch\n", cell, "m = torch.ones(1).cuda()"))
    r = run_cli("fix", "nb.ipynb", "--write", "--select", "DEV001", "--no-cache", cwd=str(tmp_path))
    assert "Traceback" not in r.err, r.err
    assert _sources(p)[1:] == [cell, "m = torch.ones(1).npu()"]


# ---------------------------------------------------------------------- the file's JSON style is kept
@pytest.mark.parametrize("style", [
    dict(indent=2, ensure_ascii=False, eol="\n"),         # Colab writes 2 spaces
    dict(indent=1, ensure_ascii=True, eol="\n"),          # \uXXXX escapes for non-ASCII text
    dict(indent="\t", ensure_ascii=False, eol="\r\n"),    # tabs and CRLF
    dict(indent=None, ensure_ascii=False, eol=""),        # one line, no final newline
])
def test_fix_changes_only_the_fixed_line_in_the_notebook_json(tmp_path, style):
    """A fix must not re-serialise the whole notebook in another style (a 1,800-line diff for a
    two-line change on CLIP's Colab notebook, indented with 2 spaces): only the fixed lines differ."""
    nb = _nb("import torch\n# héllo → ünïcode\n", ("md", "# Títle\n"), "m = torch.nn.Linear(1, 1).cuda()\nprint('ok')\n")
    text = json.dumps(nb, indent=style["indent"], ensure_ascii=style["ensure_ascii"])
    if style["indent"] is not None:
        text = text.replace("\n", style["eol"])
    text += style["eol"]
    p = tmp_path / "nb.ipynb"
    p.write_bytes(text.encode("utf-8"))
    r = run_cli("fix", "nb.ipynb", "--write", "--select", "DEV001", "--no-cache", cwd=str(tmp_path))
    assert "Traceback" not in r.err, r.err
    after = p.read_bytes().decode("utf-8")
    assert after == text.replace(".cuda()", ".npu()")


# ---------------------------------------------------------------------- related locations in cells
FLAG_CELLS = (
    "import torch\n",
    "device = torch.device('cuda')\n"   # cell 2, line 1
    "cuda = device.type != 'cpu'\n",    # cell 2, line 2: the flag DEV027's related location names
    "x = 1\n"                           # cell 3, line 1
    "if cuda:\n"                        # cell 3, line 2: DEV027
    "    torch.cuda.synchronize()\n",
)


def test_related_locations_in_a_notebook_name_cell_and_line(tmp_path):
    """A finding's related location in the same notebook is in the notebook's one coordinate system
    (cell, line in the cell), as its message and notes are: it named a line of the hidden module that
    joins the cells (line 3 here), and SARIF pointed at line 3 of the ``.ipynb`` JSON."""
    p = _write(tmp_path, _nb(*FLAG_CELLS))
    raw_lines = p.read_text(encoding="utf-8").split("\n")
    r = run_cli("scan", "nb.ipynb", "--format", "json", "--no-cache", "-j", "1", "--fail-on", "never", cwd=str(tmp_path))
    flag = next(f for f in json.loads(r.out)["findings"] if f["code"] == "DEV027")
    assert (flag["cell"], flag["cell_line"]) == (3, 2)
    assert "cell 2, line 2" in flag["message"]
    (rel,) = flag["related"]
    assert (rel["path"], rel["cell"], rel["line"], rel["col"]) == ("nb.ipynb", 2, 2, 7)
    assert "cuda = device.type != 'cpu'" in raw_lines[rel["json_line"] - 1]
    sarif = json.loads(run_cli("scan", "nb.ipynb", "--format", "sarif", "--no-cache", "-j", "1", "--fail-on", "never",
                               cwd=str(tmp_path)).out)
    res = next(x for x in sarif["runs"][0]["results"] if x["ruleId"] == "DEV027")
    (loc,) = res["relatedLocations"]
    at = loc["physicalLocation"]["region"]["startLine"]
    assert "cuda = device.type != 'cpu'" in raw_lines[at - 1]  # the link lands on the flag's line in the .ipynb
    assert loc["properties"] == {"cell": 2, "cellLine": 2, "cellColumn": 8}
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parent / "data" / "sarif" / "sarif-2.1.0-rtm.5.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(sarif)


def test_related_locations_in_a_py_file_stay_lines_of_the_file(tmp_path):
    (tmp_path / "t.py").write_text("".join(FLAG_CELLS), encoding="utf-8")
    r = run_cli("scan", "t.py", "--format", "json", "--no-cache", "-j", "1", "--fail-on", "never", cwd=str(tmp_path))
    flag = next(f for f in json.loads(r.out)["findings"] if f["code"] == "DEV027")
    assert flag["related"] == [{"path": "t.py", "line": 3, "col": 7, "message": flag["related"][0]["message"]}]
    sarif = json.loads(run_cli("scan", "t.py", "--format", "sarif", "--no-cache", "-j", "1", "--fail-on", "never",
                               cwd=str(tmp_path)).out)
    (loc,) = next(x for x in sarif["runs"][0]["results"] if x["ruleId"] == "DEV027")["relatedLocations"]
    assert loc["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 8} and "properties" not in loc
