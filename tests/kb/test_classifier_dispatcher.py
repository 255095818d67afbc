"""The KB's dispatch classes agree with the real dispatcher of the installed torch (2.13).

For every aten overload that torch_npu 2.13.0 does not register, the class in the
KB must match where PyTorch's dispatcher sends the PrivateUse1 key
(``torch._C._dispatch_dump_table``): a CompositeImplicitAutograd "math kernel",
a generated CompositeExplicitAutograd[NonFunctional] "default backend kernel", or
nothing (then torch_npu's boxed CPU fallback takes it)."""

from __future__ import annotations

import pytest
import torch

from ascendify.kb import ops as kbops

pytestmark = pytest.mark.skipif(torch.__version__.split("+")[0] != "2.13.0", reason="table is for torch 2.13.0")


def _pu1(op: str):
    try:
        tab = torch._C._dispatch_dump_table("aten::" + op)
    except RuntimeError:
        return None
    for line in tab.splitlines():
        if line.startswith("PrivateUse1:"):
            return line
    return ""


def test_dispatcher_agrees_with_kb():
    t = kbops.load_release("2.13.0")
    expected = {
        "math": {"composite_implicit"},
        "CompositeExplicitAutogradNonFunctional": {"npu_via_structured_out", "cpu_fallback", "composite_explicit"},
        "CompositeExplicitAutograd": {"composite_explicit"},
        "none": {"cpu_fallback", "not_dense", "npu_foreach_slow"},
    }
    checked = 0
    bad = []
    for op, (cls, impl, disp) in t.ops.items():
        if cls in ("npu_kernel", "npu_only_not_in_torch_yaml"):
            continue
        line = _pu1(op)
        if line is None:
            continue
        if "[math kernel]" in line:
            kind = "math"
        elif "CompositeExplicitAutogradNonFunctional" in line:
            kind = "CompositeExplicitAutogradNonFunctional"
        elif "CompositeExplicitAutograd" in line:
            kind = "CompositeExplicitAutograd"
        elif line == "" or "fallthrough" in line or "[default backend kernel]" not in line:
            kind = "none"
        else:
            kind = "other"
        if cls not in expected.get(kind, set()):
            bad.append((op, cls, kind))
        if cls == "cpu_fallback" and kind == "CompositeExplicitAutogradNonFunctional":
            assert disp.startswith("structured_delegate:"), op  # the wrapper calls an unregistered .out
        checked += 1
    assert checked > 1400
    assert bad == []
