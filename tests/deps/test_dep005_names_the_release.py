"""DEP005 (a torch pin with no torch_npu) said "pin one of" 1.8.1 ... 2.1.0, while the code fixes were written
for the recommended torch_npu (2.12.0, auto-loaded: no `import torch_npu` added): following the advice broke
every torch.npu line (deit, second held-out review).  The message names the release the fixes were written
for and how to re-run for another."""

from __future__ import annotations

import json

from tests.cli_util import run_cli


def test_dep005_says_which_release_the_fixes_assume(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch==1.13.1\n", encoding="utf-8")
    (tmp_path / "t.py").write_text("import torch\nx = torch.zeros(1).cuda()\n", encoding="utf-8")
    r = run_cli("scan", ".", "--format", "json", "--no-cache", "--torch-npu", "2.7.1", cwd=str(tmp_path))
    (f,) = [f for f in json.loads(r.out)["findings"] if f["code"] == "DEP005"]
    assert "the code fixes were written for torch_npu 2.7.1 (torch 2.7.1)" in f["message"]
    assert "--torch-npu" in f["message"]
