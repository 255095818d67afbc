"""Settings-dependent behaviour of the IMP, DTY and CMP rules (target torch_npu release, chip).

The rule-case harness (test_rule_cases.py) runs every fixture with default
settings only; these tests vary the settings.
"""

from __future__ import annotations

import textwrap

import pytest

from .helpers import findings_for, fixed_text


ENTRY = """
import torch

model = torch.nn.Linear(2, 2).npu()

if __name__ == "__main__":
    print(model)
"""
LIBRARY = """
import torch


def to_device(x):
    return x.npu()
"""


def _write(tmp_path, text, name="mod.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(p)


@pytest.mark.parametrize(
    "version,text,severity",
    [
        ("2.4.0", ENTRY, "error"),  # no torch.backends entry point before 2.5.1
        ("2.1.0.post17", LIBRARY, "warning"),  # an imported module: the entry script may import torch_npu
        ("2.5.1", ENTRY, None),  # autoload via the entry point: nothing to import, nothing reported
        ("2.7.1.post11", LIBRARY, None),
    ],
)
def test_imp002_severity_follows_target_release(tmp_path, version, text, severity):
    found = findings_for(_write(tmp_path, text), "IMP002", torch_npu=version)
    if severity is None:
        assert found == []
        return
    assert [(f.line, f.severity) for f in found] == [(4 if text is ENTRY else 6, severity)]
    assert "not auto-loaded" in found[0].message


def test_imp002_silent_for_device_probing_code(tmp_path):
    probe = """
    import torch


    def pick_device():
        if hasattr(torch, "npu") and torch.npu.is_available():
            return torch.device("npu")
        return torch.device("cpu")
    """
    assert findings_for(_write(tmp_path, probe), "IMP002", torch_npu="2.4.0") == []
    assert len(findings_for(_write(tmp_path, probe.replace('hasattr(torch, "npu") and ', "")), "IMP002", torch_npu="2.4.0")) == 1


BF16 = """
import torch

x = torch.ones(2, dtype=torch.bfloat16)
"""


@pytest.mark.parametrize(
    "chip,expected",
    [
        (None, [(4, "info")]),
        ("Ascend910B3", []),
        ("Ascend910_9392", []),
        ("Ascend950DT", []),  # any Ascend950* maps to the 950 family
        ("Ascend910A", [(4, "warning")]),
        ("Ascend910B", [(4, "warning")]),  # first-gen variant, not the A2 910B1-B4
        ("Ascend310P3", [(4, "warning")]),
        ("Ascend310B1", [(4, "info")]),  # conflicting sources: unknown
        ("AscendFoo", [(4, "info")]),  # unknown chip
    ],
)
def test_dty005_depends_on_chip(tmp_path, chip, expected):
    found = findings_for(_write(tmp_path, BF16), "DTY005", chip=chip)
    assert [(f.line, f.severity) for f in found] == expected
    if expected and expected[0][1] == "warning":
        assert chip in found[0].message and "no bf16" in found[0].message


COMPILE = """
import torch

a = torch.compile(torch.nn.Linear(2, 2))
b = torch.compile(torch.nn.Linear(2, 2), backend="cudagraphs")
"""


def test_cmp001_warns_before_2_6_and_informs_after(tmp_path):
    path = _write(tmp_path, COMPILE)
    old = findings_for(path, "CMP001", torch_npu="2.5.1")
    new = findings_for(path, "CMP001", torch_npu="2.7.1")
    assert [(f.line, f.severity) for f in old] == [(4, "warning")]
    assert 'backend="npu"' in old[0].message
    assert [(f.line, f.severity) for f in new] == [(4, "info")]
    assert "Triton-Ascend" in new[0].message


def test_cmp002_no_npugraphs_rewrite_before_2_6(tmp_path):
    path = _write(tmp_path, COMPILE)
    assert 'backend="npugraphs"' in fixed_text(path, "CMP002", torch_npu="2.7.1")
    assert 'backend="cudagraphs"' in fixed_text(path, "CMP002", torch_npu="2.5.1")


def test_ext002_guarded_import_is_a_warning(tmp_path):
    path = _write(tmp_path, "try:\n    from apex.optimizers import FusedSGD\nexcept ImportError:\n    FusedSGD = None\n\nimport apex\n")
    found = findings_for(path, "EXT002")
    assert [(f.line, f.severity) for f in found] == [(2, "warning"), (6, "error")]
    assert "guarded by `except ImportError`" in found[0].message
