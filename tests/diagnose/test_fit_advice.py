"""diagnose on an NPU OOM log points to `ascendify fit` (issue 14: predict before the next run)."""

from __future__ import annotations

import json

from tests.cli_util import run_cli

OOM = ("[rank0]: RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.96 GiB total capacity; "
       "58.10 GiB already allocated; 58.10 GiB current active; 0.52 GiB free; 59.00 GiB reserved in total by PyTorch)\n")


def test_oom_next_step_names_ascendify_fit(tmp_path):
    log = tmp_path / "oom.log"
    log.write_text(OOM)
    doc = json.loads(run_cli("diagnose", str(log), "--format", "json").out)
    first = doc["findings"][0]
    assert first["id"] == "npu-oom"
    assert "ascendify fit" in first["next_step"] and "--batch auto" in first["next_step"]
