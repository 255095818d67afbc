"""MEM001's version-dependent half: `pin_memory=True` alone only matters for a torch_npu target before 2.5."""

from __future__ import annotations

import os

from .helpers import CASES, findings_for, fixed_text

OLD = "2.1.0"


def test_pin_memory_without_device_reported_for_old_torch_npu(tmp_path):
    path = tmp_path / "loader.py"
    path.write_text(
        "from torch.utils.data import DataLoader\n"
        "loader = DataLoader(ds, batch_size=8, pin_memory=True)\n"
        "other = DataLoader(ds, batch_size=8)\n",
        encoding="utf-8",
    )
    old = findings_for(str(path), "MEM001", torch_npu=OLD)
    assert [(f.line, f.severity) for f in old] == [(2, "silent")]
    assert "2.1.0" in old[0].message
    assert findings_for(str(path), "MEM001") == []  # default target 2.7.1: current accelerator is used
    text = fixed_text(str(path), "MEM001", "npu", torch_npu=OLD)
    assert 'DataLoader(ds, batch_size=8, pin_memory=True, pin_memory_device="npu")' in text
    assert "import torch_npu" in text


def test_ok_fixture_stays_clean_for_old_torch_npu():
    ok = os.path.join(CASES, "MEM001_ok.py")
    # the first loader (pin_memory=True, no device) is the only one an old target flags
    assert [f.line for f in findings_for(ok, "MEM001", torch_npu=OLD)] == [3]
