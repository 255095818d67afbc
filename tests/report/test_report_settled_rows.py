"""The report's steps and rows count a call site that goes with its helper's fix (DEV026, settled) as such,
not as open: the demo's header said 20 need a person while the steps' open counts added up to 26, and
minGPT's header said 0 while two rows said "open" (new-user trial)."""

from __future__ import annotations

import json
import os

from tests.cli_util import run_cli

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "cuda_project")


def test_steps_open_counts_add_up_to_the_header(tmp_path):
    r = run_cli("report", os.path.abspath(EXAMPLE), "--out-dir", str(tmp_path / "r"), cwd=str(tmp_path))
    assert r.code == 0, r.err
    doc = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    s = doc["summary"]
    assert sum(st["open"] for st in doc["plan"]) == s["open"], ([st["open"] for st in doc["plan"]], s["open"])
    assert sum(st.get("settled", 0) for st in doc["plan"]) == s["settled"]
    index = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert index.count("goes with the fix of its helper") == s["settled"]
