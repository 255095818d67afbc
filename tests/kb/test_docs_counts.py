"""The counts quoted in docs/ops-and-probe.md match the built KB data."""

from __future__ import annotations

import json
import os
import re

from ascendify.kb import ops as kbops

from .conftest import ROOT

DOC = os.path.join(ROOT, "docs", "ops-and-probe.md")
CLASS_ORDER = ["npu_kernel", "npu_via_structured_out", "npu_foreach_slow", "composite_implicit",
               "composite_explicit", "cpu_fallback", "not_dense", "npu_only_not_in_torch_yaml"]


def _block_rows():
    text = open(DOC, encoding="utf-8").read()
    block = text[text.index("<!-- kb-counts:start -->"):text.index("<!-- kb-counts:end -->")]
    rows = {}
    for line in block.splitlines():
        m = re.match(r"\|\s*(\d+\.\d+\.\d+(?:\.post\d+)?)\s*\|\s*(\d+\.\d+\.\d+)\s*\|(.*)\|$", line)
        if m:
            rows[m.group(1)] = [int(x) for x in m.group(3).split("|")]
    return rows, block


def test_class_counts_in_docs_match_tables():
    rows, _ = _block_rows()
    assert sorted(rows) == sorted(kbops.releases())
    for rel, nums in rows.items():
        t = kbops.load_release(rel)
        counts = {}
        for cls, _impl, _d in t.ops.values():
            counts[cls] = counts.get(cls, 0) + 1
        assert nums[0] == len(t.ops)
        assert nums[1:9] == [counts.get(c, 0) for c in CLASS_ORDER], rel
        assert nums[9] == t.meta["npu_registered_aten_overloads"]
        assert nums[10] == len(t.custom)
        assert nums[11] == len(t.meta["disagreements"])


def test_registered_counts_match_research_summary(reference):
    # independent: the research's own count of NPU-registered aten overloads per wheel
    with open(os.path.join(reference, "data", "derived", "classification_summary.json"), encoding="utf-8") as fh:
        summ = json.load(fh)
    rows, _ = _block_rows()
    for rel, nums in rows.items():
        assert nums[9] == summ[rel]["npu_registered_aten_overloads"], rel
        assert nums[10] == summ[rel]["custom_npu_ops"], rel


def test_doc_lists_counts():
    _, block = _block_rows()
    from ascendify.kb import apis
    notes = apis._notes()
    n213 = sum(1 for v in notes["apis"].values() if "2.13.0" in v)
    assert f"| 2.13.0 | {n213} |" in block
    dep = len(apis.deprecated_table()["deprecated"])
    assert f"deprecated.yaml): {dep}." in block
