"""noqa and the project pass run once, after the passes that make findings (issue 19): cross-file
findings are built from every device rule whatever ``--select`` says and filtered at output; a
suppressed helper line is no work at its callers; the plan's counts are what the fix run leaves."""

from __future__ import annotations

import json

from tests.cli_util import run_cli

HELPERS = """import torch


def sync():
    torch.cuda.synchronize()


def quiet():
    torch.cuda.synchronize()  # noqa: DEV008
"""
TRAIN = """from helpers import quiet, sync

sync()
quiet()
"""


def _tree(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "helpers.py").write_text(HELPERS, encoding="utf-8")
    (root / "train.py").write_text(TRAIN, encoding="utf-8")
    return root


def _scan(root, *args):
    r = run_cli("scan", ".", "--format", "json", "--fail-on", "never", "--no-cache", *args, cwd=str(root))
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_select_dev026_alone_finds_what_a_full_scan_finds(tmp_path):
    root = _tree(tmp_path)
    full = [f for f in _scan(root)["findings"] if f["code"] == "DEV026"]
    alone = _scan(root, "--select", "DEV026")["findings"]
    assert [f["line"] for f in full] == [3]  # quiet(): its only CUDA work is suppressed where it is written
    assert alone == full  # the same findings, messages and related locations
    assert "`torch.cuda.synchronize` raises without CUDA" in alone[0]["message"]  # the helper's own message
    assert [(r["path"], r["line"], r["code"], r["cause"]) for r in alone[0]["related"] if "cause" in r] == [("helpers.py", 5, "DEV008", True)]


def test_plan_counts_are_what_the_fix_run_and_a_rescan_find(tmp_path):
    root = _tree(tmp_path)
    plan = _scan(root)["summary"]
    # DEV008 in sync() is fixed; the call site's DEV026 goes with it; nothing is left
    assert (plan["findings"], plan["fixed"], plan["settled"], plan["open"]) == (2, 1, 1, 0)
    assert "1 more go with those fixes" in plan["fixed_text"] and "0 need a person" in plan["fixed_text"]
    r = run_cli("fix", ".", "--out-dir", str(tmp_path / "out"), "--no-cache", cwd=str(root))
    assert r.code in (0, 1), r.err
    log = json.loads((tmp_path / "out" / "ascendify-changes.json").read_text(encoding="utf-8"))
    assert (log["summary"]["fixed"], log["summary"]["settled"], log["summary"]["open"]) == (1, 1, 0)
    assert _scan(tmp_path / "out")["summary"]["findings"] == 0


def test_a_helper_with_work_left_keeps_its_call_site_open(tmp_path):
    root = _tree(tmp_path)
    (root / "helpers.py").write_text(HELPERS + "\n\ndef cap():\n    return torch.cuda.get_device_capability()\n", encoding="utf-8")
    (root / "train.py").write_text(TRAIN + "from helpers import cap\ncap()\n", encoding="utf-8")
    doc = _scan(root)
    dev026 = {f["line"]: f for f in doc["findings"] if f["code"] == "DEV026"}
    cap_fixable = [f for f in doc["findings"] if f["path"] == "helpers.py" and f["line"] == 13]
    assert sorted(dev026) == [3, 6] and len(cap_fixable) == 1
    settles = [r["cause"] for r in dev026[6]["related"] if "cause" in r]
    assert settles == [cap_fixable[0]["fixable"] and cap_fixable[0]["fix"]["safe"]]
    r = run_cli("fix", ".", "--out-dir", str(tmp_path / "out"), "--no-cache", cwd=str(root))
    log = json.loads((tmp_path / "out" / "ascendify-changes.json").read_text(encoding="utf-8"))
    assert log["summary"]["open"] == doc["summary"]["open"] == _scan(tmp_path / "out")["summary"]["findings"]
