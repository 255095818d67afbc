"""A torchvision C++ op on NPU tensors under ``ascendify run`` (field trial, issue 23: yolov5's
``torchvision.ops.nms`` in validation).  Stock torchvision has no PrivateUse1 kernel, so torch_npu's
CPU fallback runs it; the run says so, names the scan rule (OPS008) and what torchvision_npu covers.

The program registers its own ``torchvision::nms`` (the schema torchvision declares, a CPU kernel):
torchvision itself is not a test dependency, and what is tested is the namespace's dispatch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ascendify.run import report

pytest.importorskip("torch")

PROG = """\
import torch

lib = torch.library.Library("torchvision", "DEF")
lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
lib.impl("nms", lambda dets, scores, thr: scores.argsort(descending=True)[:1], "CPU")
other = torch.library.Library("trialcheck", "DEF")
other.define("twice(Tensor x) -> Tensor")
other.impl("twice", lambda x: x * 2, "CPU")

boxes = torch.tensor([[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]], device="npu")
scores = torch.tensor([0.2, 0.9], device="npu")
keep = torch.ops.torchvision.nms(boxes, scores, 0.5)
print("keep", keep.tolist(), keep.device.type)
print("twice", torch.ops.trialcheck.twice(scores).tolist())
"""


def test_fallback_rule_names_ops008_for_torchvision_ops_only():
    rule, hint = report.fallback_rule("torchvision::nms")
    assert rule == "OPS008"
    assert "import torchvision_npu" in hint and "0.21.0" in hint
    rule, hint = report.fallback_rule("torchvision::ps_roi_align")
    assert rule == "OPS008" and "no NPU kernel for it either" in hint
    assert report.fallback_rule("aten::linalg_inv_ex.inverse") == (None, None)
    assert report.fallback_rule("trialcheck::twice") == (None, None)
    assert report.fallback_rule("torchvision::_cuda_version") == (None, None)  # not an op the table lists


def test_run_reports_torchvision_nms_fallback_with_rule(tmp_path):
    (tmp_path / "det.py").write_text(PROG, encoding="utf-8")
    rep = tmp_path / "r.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("ASCENDIFY_RUN_CONFIG", None)
    p = subprocess.run([sys.executable, "-m", "ascendify", "run", "--report", str(rep), "--", sys.executable, "det.py"],
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "keep [1] npu" in p.stdout
    assert "CAUTION: The operator 'torchvision::nms' is not currently supported on the NPU backend" in p.stderr
    doc = json.loads(rep.read_text(encoding="utf-8"))
    fb = {f["op"]: f for f in doc["fallbacks"]}
    assert fb["torchvision::nms"]["rule"] == "OPS008"
    assert fb["torchvision::nms"]["where"] == ["det.py:12"]
    assert fb["trialcheck::twice"]["rule"] is None and fb["trialcheck::twice"]["hint"] is None
    text = report.render_text(doc)
    assert "CPU fallback: torchvision::nms reached from det.py:12\n   OPS008: stock torchvision has no NPU kernel" in text
    assert "import torchvision_npu" in text
