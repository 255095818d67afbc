"""EXT017 at the call of a library helper that a project module re-exports under its own name (yolov5's
utils/torch_utils.py: ``from ultralytics.utils.torch_utils import autocast as smart_amp_autocast``; train.py
calls ``smart_amp_autocast(amp)``, whose ``device="cuda"`` default turns AMP off on Ascend: field trial,
issue 23).  The call is reported where the user wrote it, with ``device="npu"`` as its safe fix (on an Ascend host only,
for the agnostic target) where the helper has an NPU path for it; a call
that passes the device is not."""

from __future__ import annotations

import json

from tests.cli_util import run_cli

TOOLS = """\
import torch
from ultralytics.utils.torch_utils import autocast as mixed_precision  # noqa: F401
from ultralytics.utils.torch_utils import get_gpu_info as card_name  # noqa: F401
"""

STEP = """\
import torch
from tools import mixed_precision, card_name


def step(model, x, on):
    with mixed_precision(on):
        y = model(x)
    with mixed_precision(on, device="npu"):
        z = model(x)
    with mixed_precision(on, "npu"):
        w = model(x)
    return y, z, w


def later(model, x):
    with mixed_precision(True):
        return model(x)
"""


def _project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "tools.py").write_text(TOOLS, encoding="utf-8")
    (root / "step.py").write_text(STEP, encoding="utf-8")
    (root / "requirements.txt").write_text("ultralytics==8.4.190\n", encoding="utf-8")
    return root


def _found(root, *args):
    r = run_cli("scan", ".", "--format", "json", "--fail-on", "never", "--no-cache", "--select", "EXT017", *args, cwd=str(root))
    assert r.code == 0, r.err
    return json.loads(r.out)["findings"]


def test_each_call_leaving_the_device_out_is_reported(tmp_path):
    root = _project(tmp_path)
    got = [(f["path"], f["line"]) for f in _found(root)]
    assert got == [("step.py", 6), ("step.py", 16)]
    f = _found(root)[0]
    assert 'default device="cuda"' in f["message"] and "ultralytics 8.4.190" in f["message"]
    assert "tools.py" in f["message"] and f["severity"] == "warning"


def test_fix_passes_the_device_for_the_npu_only(tmp_path):
    root = _project(tmp_path)
    r = run_cli("fix", ".", "--target", "npu", "--select", "EXT017", "--no-cache", cwd=str(root))
    assert "+    with mixed_precision(on, device=\"npu\"):" in r.out, r.out + r.err
    assert "+    with mixed_precision(True, device=\"npu\"):" in r.out
    added = [ln for ln in r.out.splitlines() if ln.startswith("+ ")]
    assert len(added) == 2  # the other two calls pass the device already
    # agnostic: the NPU value on an Ascend host only, the default elsewhere
    r = run_cli("fix", ".", "--target", "agnostic", "--select", "EXT017", "--no-cache", cwd=str(root))
    assert '+    with mixed_precision(on, device="npu" if DEVICE_TYPE == "npu" else "cuda"):' in r.out, r.out + r.err
    assert "+DEVICE_TYPE = torch.accelerator.current_accelerator().type if" in r.out


def test_a_cuda_default_without_an_npu_path_is_reported_but_not_fixed(tmp_path):
    # timm's NativeScaler(device="cuda") has no NPU path of its own for device="npu": report only
    root = tmp_path / "proj"
    root.mkdir()
    (root / "tools.py").write_text("from timm.utils import NativeScaler as LossScaler  # noqa: F401\n", encoding="utf-8")
    (root / "step.py").write_text("from tools import LossScaler\n\nscaler = LossScaler()\n", encoding="utf-8")
    (root / "requirements.txt").write_text("timm==1.0.31\n", encoding="utf-8")
    got = _found(root)
    assert [(f["path"], f["line"]) for f in got] == [("step.py", 3)]
    assert "NativeScaler" in got[0]["message"] and not got[0].get("fix")
