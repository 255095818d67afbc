"""An agnostic fix never uses DEVICE_TYPE where the module runs before the prelude defines it.

Found in review (dinov2's dinotxt.ipynb): cell 2 calls `.cuda()` before any cell imports torch; the
prelude went in the first cell that imports torch (cell 5) and cell 2's `.to(DEVICE_TYPE)` raised
NameError when the notebook ran top to bottom.  Such a fix is left for a person; a use inside a
function body (it runs when called, after the module's statements) is still fixed.
"""

import json

from tests.cli_util import run_cli


def _notebook(path, cells):
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c} for c in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def _cells(path):
    return ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]]


def test_a_cell_before_the_first_torch_import_is_not_given_device_type(tmp_path):
    src = tmp_path / "p"
    src.mkdir()
    _notebook(src / "n.ipynb", [["import sys\n", "print(sys.version)"],
                                ["from mylib import Net\n", "model = Net().cuda()"],
                                ["import torch\n", "x = torch.zeros(2).cuda()"]])
    r = run_cli("fix", str(src), "--target", "agnostic", "--out-dir", str(tmp_path / "out"))
    assert r.code in (0, 1), r.err
    cells = _cells(tmp_path / "out" / "n.ipynb")
    assert cells[1] == "from mylib import Net\nmodel = Net().cuda()"  # left as written
    assert "DEVICE_TYPE = " in cells[2] and cells[2].endswith("x = torch.zeros(2).to(DEVICE_TYPE)")
    assert "fixed 1 finding(s)" in r.err + r.out


def test_a_function_body_above_the_prelude_is_still_fixed(tmp_path):
    src = tmp_path / "p"
    src.mkdir()
    (src / "m.py").write_text("def place(m):\n    return m.cuda()\n\n\nimport torch\n\nx = torch.zeros(2).cuda()\n", encoding="utf-8")
    r = run_cli("fix", str(src), "--target", "agnostic", "--out-dir", str(tmp_path / "out"))
    assert r.code in (0, 1), r.err
    text = (tmp_path / "out" / "m.py").read_text(encoding="utf-8")
    assert "return m.to(DEVICE_TYPE)" in text and "x = torch.zeros(2).to(DEVICE_TYPE)" in text
