"""migrate's fit table: shown when [tool.ascendify.fit] names a model factory (ascendify.fit.hook)."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from ..cli_util import run_cli

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples", "cuda_project")
FIT = '\n[tool.ascendify.fit]\nfactory = "trainer.models.vit:vit_tiny"\ninputs = ["x:8,3,32,32:float32"]\noptimizer = "adamw"\n'


def _migrate(tmp_path, extra: str):
    pytest.importorskip("torch")
    proj = tmp_path / "proj"
    shutil.copytree(EXAMPLE, proj)
    with open(proj / "pyproject.toml", "a", encoding="utf-8") as fh:
        fh.write(extra)
    r = run_cli("migrate", str(proj), "--out-dir", str(tmp_path / "out"), "--no-doctor", "--no-cache", "--fail-on", "never")
    assert r.code == 0, r.err
    doc = json.loads((tmp_path / "out" / "report" / "report.json").read_text(encoding="utf-8"))
    html = (tmp_path / "out" / "report" / "index.html").read_text(encoding="utf-8")
    return doc, html


def test_fit_table_when_the_config_names_a_factory(tmp_path):
    doc, html = _migrate(tmp_path, FIT)
    fit = doc["sections"]["fit"]
    assert fit["chip"] == "Ascend910B3" and fit["fits"] is True and fit["peak_bytes"] > 0
    assert [r["lever"] for r in fit["table"]][0] == fit["rows"][0]["lever"]
    assert 'id="fit-table"' in html and "<strong>Fits</strong> Ascend910B3" in html


def test_fit_that_cannot_run_says_why_in_one_line(tmp_path):
    doc, html = _migrate(tmp_path, FIT.replace("vit_tiny", "no_such_factory"))
    fit = doc["sections"]["fit"]
    assert fit["status"] == "not run" and "no_such_factory" in fit["reason"] and "\n" not in fit["reason"]
    assert "Not run: " in html


def test_no_fit_config_no_fit_run(tmp_path):
    doc, html = _migrate(tmp_path, "")
    assert "fit" not in doc["sections"]
    assert "[tool.ascendify.fit]" in html  # the hint says how to get the table
