"""OPS008: torchvision's C++ ops on the NPU (issue 23's field trial: yolov5's nms fell back to the CPU
under run while the scan said nothing).  What torchvision_npu covers decides the message and whether a
file that imports it is reported."""

from __future__ import annotations

import textwrap

from ascendify.rules.checks.operators import torchvision_ops
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import SourceFile

from .helpers import settings_for


def _ops008(code: str, target: str = "npu"):
    text = textwrap.dedent(code)
    src = SourceFile(path="m.py", text=text)
    return [(f.line, f.message) for f in analyze_source(src, "m.py", settings_for("OPS008", target=target))
            if f.code == "OPS008"]


def test_table_covers_what_the_adapter_readme_lists():
    tv = torchvision_ops()
    assert {op for op, on in tv["npu"].items() if on} == {"nms", "roi_align", "roi_pool", "deform_conv2d"}
    assert {op for op, on in tv["npu"].items() if not on} == {"ps_roi_align", "ps_roi_pool"}
    assert tv["apis"]["torchvision.ops.batched_nms"] == "nms"
    assert tv["apis"]["torchvision.ops.MultiScaleRoIAlign"] == "roi_align"


def test_adapter_import_silences_covered_ops_but_not_ps_roi_pool():
    got = _ops008("""\
        import torch_npu
        import torchvision
        import torchvision_npu
        from torchvision.ops import ps_roi_pool, roi_align

        a = roi_align(x, rois, 7)
        b = ps_roi_pool(x, rois, 7)
        """)
    assert [ln for ln, _ in got] == [7]
    assert "`torchvision::ps_roi_pool`" in got[0][1] and "no NPU kernel for it either" in got[0][1]


def test_message_names_the_adapter_and_its_torchvision_releases_on_both_targets():
    for target in ("npu", "agnostic"):
        got = _ops008("""\
            import torchvision

            keep = torchvision.ops.boxes.batched_nms(b, s, idx, 0.5)
            """, target)
        assert [ln for ln, _ in got] == [3]
        msg = got[0][1]
        assert msg.startswith("`torchvision.ops.boxes.batched_nms` runs the C++ op `torchvision::nms`")
        assert "`import torchvision_npu`" in msg and "0.12.0, 0.16.0, 0.20.1, 0.21.0" in msg


def test_other_libraries_nms_and_tensor_ops_are_not_reported():
    assert _ops008("""\
        import torch
        import torchvision
        from mmcv.ops import nms, roi_align

        keep = nms(b, s, 0.5)
        pooled = roi_align(x, rois, (7, 7))
        iou = torchvision.ops.box_iou(b, b)
        area = torchvision.ops.box_area(b)
        """) == []
