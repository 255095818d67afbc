"""Per-name severities of the torch.cuda API map (cuda_api_map.toml `severity`)."""

from __future__ import annotations

from .helpers import findings_for


def test_a_call_that_returns_0_on_npu_is_silent_one_that_raises_is_an_error(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("import torch\nn = torch.cuda.device_count()\ntorch.cuda.set_device(0)\nok = torch.cuda.is_initialized()\n")
    sev = {f.line: f.severity for f in findings_for(str(p), "DEV008")}
    assert sev == {2: "silent", 3: "error", 4: "silent"}
