"""A helper's CUDA parameter default is work only where a call leaves it to the default (issue 20,
K's family 2: open_clip's ``get_autocast(precision, device_type='cuda')``, always called with
``device_type=device.type``, made every caller, and the callers of those callers, a DEV026 error)."""

from __future__ import annotations

import json

from tests.cli_util import run_cli

AMP = '''import torch
from functools import partial


def make_amp_ctx(mode, kind="cuda", enabled=True):
    return partial(torch.autocast, device_type=kind, enabled=enabled)


def place(t, *, where="cuda"):
    return t.to(where)


class Recorder:
    def start(self, dev="cuda"):
        return torch.zeros(1).to(dev)
'''

STEPS = '''from amp_utils import Recorder, make_amp_ctx, place


def by_keyword(dev):
    return make_amp_ctx("fp16", kind=dev.type)


def by_position(dev):
    return make_amp_ctx("fp16", dev.type)


def left_out():
    return make_amp_ctx("fp16")


def cuda_passed():
    return make_amp_ctx("fp16", kind="cuda")


def unknown_position(args):
    return make_amp_ctx(*args)


def keyword_only(t, dev):
    return place(t, where=dev), place(t)


def on_instance(dev):
    rec = Recorder()
    rec.start(dev)
    rec.start()
'''

TOP = '''from steps import by_keyword, by_position, left_out, keyword_only

by_keyword(None)
by_position(None)
left_out()
keyword_only(None, "cpu")
'''


def _dev026(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    for name, text in (("amp_utils.py", AMP), ("steps.py", STEPS), ("top.py", TOP)):
        (root / name).write_text(text, encoding="utf-8")
    r = run_cli("scan", ".", "--format", "json", "--fail-on", "never", "--no-cache", cwd=str(root))
    assert r.code == 0, r.err
    return {(f["path"], f["line"], f["col"]): f for f in json.loads(r.out)["findings"] if f["code"] == "DEV026"}


def test_a_call_that_passes_the_parameter_does_no_default_work(tmp_path):
    got = _dev026(tmp_path)
    assert sorted(got) == [
        ("steps.py", 13, 11),  # left out: the default "cuda" is used
        ("steps.py", 17, 11),  # "cuda" passed: CUDA work still
        ("steps.py", 21, 11),  # *args: which parameters it fills is unknown
        ("steps.py", 25, 32),  # place(t): keyword-only default left out (place(t, where=dev) at col 11 is not)
        ("steps.py", 31, 8),  # rec.start(): a method's default (rec.start(dev) passes it: self is not counted)
        ("top.py", 5, 0),  # left_out() reaches the default through make_amp_ctx
        ("top.py", 6, 0),  # keyword_only() has one call that leaves it out
    ]
    f = got[("steps.py", 13, 11)]
    assert f["message"].startswith("`make_amp_ctx()` runs CUDA/NCCL code in amp_utils.py: DEV024 at line 5")


def test_callers_of_a_passing_caller_inherit_nothing(tmp_path):
    got = _dev026(tmp_path)
    # by_keyword()/by_position() pass kind= at every call of make_amp_ctx: nothing reaches top.py:3-4
    assert not [k for k in got if k[0] == "top.py" and k[1] in (3, 4)]
    assert not [k for k in got if k[0] == "steps.py" and k[1] in (5, 9, 30)]
