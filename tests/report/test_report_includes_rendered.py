"""report --include: fit and profile results rendered as sections, not raw dumps (issue 22)."""

from __future__ import annotations

import html
import json
import os
import re

import pytest

from tests.cli_util import run_cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIT_MODEL = '''import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(64, 64)

    def forward(self, x):
        return self.l(x).sum()


def factory():
    return M()
'''


def _section(index: str, name: str) -> str:
    m = re.search(rf'<section class="section" id="section-{re.escape(name)}">(.*?)</section>', index, re.S)
    assert m, name
    return m.group(1)


def _words(fragment: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", fragment)))


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    pytest.importorskip("torch")
    t = tmp_path_factory.mktemp("inc")
    (t / "fitm.py").write_text(FIT_MODEL)
    r = run_cli("fit", str(t / "fitm.py") + ":factory", "--input", "x:8,64", "--chip", "Ascend910B3", "--format", "json",
                "-o", str(t / "fit.json"), cwd=str(t))
    assert r.code in (0, 1), r.err
    r = run_cli("profile", os.path.join(ROOT, "examples", "profile_sample"), "--format", "json", "-o", str(t / "prof.json"))
    assert r.code == 0, r.err
    proj = t / "proj"
    proj.mkdir()
    (proj / "a.py").write_text("import torch\nx = torch.zeros(2).cuda()\n")
    r = run_cli("report", str(proj), "--out-dir", str(t / "rep"), "--include", str(t / "fit.json"),
                "--include", str(t / "prof.json"), cwd=str(t))
    assert r.code == 0, r.err
    return (t / "rep" / "index.html").read_text(encoding="utf-8"), json.loads((t / "fit.json").read_text())


def test_included_profile_replaces_not_run(rendered):
    index, _ = rendered
    sec = _section(index, "profile")
    assert "Not run" not in sec
    assert 'id="section-profile analyze"' not in index  # not a second, raw section
    words = _words(sec)
    assert "MatMulV2" in words and "AI_CPU" in words and "IndexPutV2" in words
    assert "op_statistic.csv None" not in words and "total_us" not in words and "None" not in words, words[:600]
    assert re.search(r"Step time .*ms", words), words[:800]


def test_included_fit_is_the_fit_table(rendered):
    index, fit = rendered
    sec = _section(index, "fit")
    assert 'id="fit-table"' in sec
    words = _words(sec)
    assert "peak_bytes" not in words and "amp None" not in words and "None" not in words, words[:600]
    assert "Ascend910B3" in words and fit["target"] in words
    assert "baseline" in words
