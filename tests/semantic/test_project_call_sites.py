"""Cross-file findings at every call site (issue 20, K's measurement): a file that calls an imported
helper doing CUDA work three times breaks at each of the three calls, so each gets its DEV026, not
only one of them; the plan's counts (fixed + settled + open) still add up, and the fixed copy has
none of them left."""

from __future__ import annotations

import json

from tests.cli_util import run_cli

HELPERS = '''import torch


def pick_device():
    return torch.device("cuda")


def seed_everything(n):
    torch.manual_seed(n)


class Timer:
    def tick(self):
        torch.cuda.synchronize()
'''

LOOP = '''import torch
from common import hw
from common.hw import Timer, seed_everything


def fit(model, batches):
    seed_everything(0)
    seed_everything(1)
    model = model.to(hw.pick_device())
    clock = Timer()
    for x in batches:
        x = x.to(hw.pick_device())
        clock.tick()
        model(x)
        clock.tick()
    if hasattr(torch, "npu") and torch.npu.is_available():
        model = model.to(hw.pick_device())
    return model.to(hw.pick_device())
'''


def _project(tmp_path, loop=LOOP):
    root = tmp_path / "proj"
    (root / "common").mkdir(parents=True)
    (root / "common" / "__init__.py").write_text("", encoding="utf-8")
    (root / "common" / "hw.py").write_text(HELPERS, encoding="utf-8")
    (root / "loop.py").write_text(loop, encoding="utf-8")
    return root


def _scan(root, *args):
    r = run_cli("scan", ".", "--format", "json", "--fail-on", "never", "--no-cache", *args, cwd=str(root))
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_each_call_of_a_cuda_helper_gets_its_finding(tmp_path):
    doc = _scan(_project(tmp_path))
    got = sorted((f["line"], f["col"]) for f in doc["findings"] if f["code"] == "DEV026")
    # pick_device() at 9, 12 and 18 (17 is in the NPU-aware branch: nothing), tick() at 13 and 15 (at the
    # name called); seed_everything() does no CUDA work (negative)
    assert got == [(9, 24), (12, 20), (13, 14), (15, 14), (18, 23)]
    by_line = {f["line"]: f for f in doc["findings"] if f["code"] == "DEV026"}
    for line in (9, 12, 18):  # each names the helper and its work, with the resolution as the last related location
        f = by_line[line]
        assert f["message"].startswith("`hw.pick_device()` runs CUDA/NCCL code in common/hw.py: DEV003 at line 5")
        assert [(r["path"], r["line"]) for r in f["related"]] == [("common/hw.py", 5), ("common/hw.py", 4)]
    assert by_line[13]["message"].startswith("`clock.tick()` runs CUDA/NCCL code in common/hw.py")
    assert by_line[15]["message"] == by_line[13]["message"]


def test_one_finding_per_call_not_per_use(tmp_path):
    # one call of the helper: one finding (the use has no further sites); a call nested in another
    # call of the same helper is a call of its own
    loop = "from common import hw\n\n\ndef f(x):\n    return x.to(hw.pick_device())\n\n\ndef g():\n    return hw.pick_device(hw.pick_device())\n"
    doc = _scan(_project(tmp_path, loop))
    assert sorted((f["line"], f["col"]) for f in doc["findings"] if f["code"] == "DEV026") == [(5, 19), (9, 14), (9, 29)]


def test_the_first_call_in_npu_aware_code_does_not_hide_the_others(tmp_path):
    loop = ('import torch\nfrom common import hw\n\n\ndef f(x):\n    if hasattr(torch, "npu") and torch.npu.is_available():\n'
            '        x = x.to(hw.pick_device())\n    return x.to(hw.pick_device())\n')
    doc = _scan(_project(tmp_path, loop))
    assert [f["line"] for f in doc["findings"] if f["code"] == "DEV026"] == [8]


def test_all_call_sites_settle_with_the_helpers_fix(tmp_path):
    root = _project(tmp_path)
    doc = _scan(root)
    s = doc["summary"]
    dev026 = [f for f in doc["findings"] if f["code"] == "DEV026"]
    assert len(dev026) == 5 and all(all(r.get("cause", True) for r in f["related"] if r.get("code")) for f in dev026)
    # the helpers' DEV003/DEV004 have safe fixes: every call site goes with them
    assert s["settled"] == 5
    assert s["findings"] == s["fixed"] + s["settled"] + s["open"]
    r = run_cli("fix", ".", "--out-dir", str(tmp_path / "fixed"), "--no-cache", cwd=str(root))
    assert r.code in (0, 1), r.err
    log = json.loads((tmp_path / "fixed" / "ascendify-changes.json").read_text(encoding="utf-8"))
    assert log["summary"]["settled"] == 5 and log["summary"]["open"] == s["open"]
    again = _scan(tmp_path / "fixed")
    assert [f for f in again["findings"] if f["code"] == "DEV026"] == []
    assert again["summary"]["findings"] == s["open"]
