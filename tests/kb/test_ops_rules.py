"""OPS rules depend on the configured torch_npu release and chip (KB data)."""

from __future__ import annotations

import os

from tests.rules.helpers import findings_for


def _write(tmp_path, text):
    p = os.path.join(tmp_path, "m.py")
    with open(p, "w", encoding="utf-8") as fh:
        fh.write(text)
    return p


SRC = "import torch\nx = torch.randn(4, 4)\ny = torch.scatter_reduce(x, 0, torch.zeros(4, 4, dtype=torch.long), x, 'sum')\n"


def test_scatter_reduce_fallback_is_release_dependent(tmp_path):
    # reference/op-support-and-versions.md §2.3: scatter_reduce.two CPU fallback until 2.6.0.post5 and in
    # 2.8.0.post5; NPU op_api kernel in 2.7.1.post11 and 2.9.0.post9+
    p = _write(str(tmp_path), SRC)
    assert [f.line for f in findings_for(p, "OPS001", torch_npu="2.6.0")] == [3]
    assert "2.8.0.post5" in findings_for(p, "OPS001", torch_npu="2.8.0")[0].message
    assert findings_for(p, "OPS001", torch_npu="2.7.1") == []
    assert findings_for(p, "OPS001", torch_npu="2.9.0") == []


def test_chip_hardware_column(tmp_path):
    p = _write(str(tmp_path), "import torch\nq = torch.randn(2, 3, 4)\ny = torch.bmm(q, q.transpose(1, 2))\n")
    f = findings_for(p, "OPS003", torch_npu="2.13.0", chip="Ascend950DT")
    assert len(f) == 1 and "950DT" in f[0].message and "unsupported" not in f[0].message
    assert findings_for(p, "OPS003", torch_npu="2.13.0", chip="Ascend910B3") == []


def test_unknown_release_uses_nearest(tmp_path):
    p = _write(str(tmp_path), "import torch\ny = torch.lgamma(torch.ones(3))\n")
    f = findings_for(p, "OPS001", torch_npu="2.99.0")
    assert len(f) == 1 and "2.14.0" in f[0].message
