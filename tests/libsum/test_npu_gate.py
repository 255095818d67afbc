"""A library helper that takes torch_npu's path only when the caller passes ``device="npu"`` keeps its
``device="cuda"`` default as work (ultralytics' ``autocast(enabled, device="cuda")``, which yolov5 calls
as ``smart_amp_autocast(amp)``: AMP silently off on Ascend; field trial, issue 23)."""

from __future__ import annotations

import textwrap

from ascendify.libsum.analyze import analyze


def _entry(code: str, name: str = "mix") -> dict:
    out = analyze({"toolkit.amp": ("toolkit/amp.py", textwrap.dedent(code))})
    return out["entries"].get(f"toolkit.amp.{name}")


GATED = """\
import torch


def mix(on, device="cuda"):
    if device == "npu":
        import torch_npu
        return torch_npu.npu.amp.autocast(enabled=on)
    if device == "mps":
        device, on = "cpu", False
    return torch.amp.autocast(device, enabled=on)


def train_step(on):
    return mix(on)


def train_step_npu(on):
    return mix(on, device="npu")
"""


def test_npu_branch_only_for_a_passed_device_keeps_the_cuda_default():
    e = _entry(GATED)
    assert "npu_aware" not in e
    assert e["work"] == [['default device="cuda"', "toolkit/amp.py", 4, "!device@1"]]
    assert e["npu_when"] == ["device"]  # passing device="npu" takes its own NPU path
    # a library caller that leaves the device out inherits it; one that passes it does not
    assert _entry(GATED, "train_step")["work"][0][0] == 'default device="cuda"'
    e = _entry(GATED, "train_step_npu")
    assert e is None or (e.get("npu_aware") and "work" not in e)


def test_a_helper_that_picks_the_npu_itself_stays_npu_aware():
    picks = GATED.replace('    if device == "npu":\n', '    if is_torch_npu_available() or device == "npu":\n')
    assert _entry(picks) == {"kind": "function", "file": "toolkit/amp.py", "line": 4, "npu_aware": True}
    chosen = GATED.replace('    if device == "mps":\n        device, on = "cpu", False\n',
                           '    device = pick_device(device)\n')
    assert _entry(chosen)["npu_aware"] is True
