"""Issue 20 item 6: newer device-type APIs and "not CPU means CUDA" flags.

Each family: what is reported (positive), what is not (negative, scope included), and what the
fix writes for each target.  Rule fixtures for the new codes are in ``cases/`` (test_rule_cases).
"""

from __future__ import annotations

import textwrap

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import SourceFile


def _src(text: str) -> SourceFile:
    return SourceFile(path="t.py", text=textwrap.dedent(text).lstrip("\n"))


def scan(text: str, select=None, target: str = "npu", **kw):
    s = Settings(select=list(select or []), target=target, **kw).validate()
    return analyze_source(_src(text), "t.py", s)


def fixed(text: str, select, target: str = "npu", unsafe: bool = False, **kw) -> str:
    s = Settings(select=list(select), target=target, unsafe_fixes=unsafe, **kw).validate()
    src = _src(text)
    findings = analyze_source(src, "t.py", s)
    out, _applied, _rem, _unsafe, error = fix_source(src, findings, s, "t.py")
    assert error is None, error
    return out


def codes(findings) -> list:
    return [(f.code, f.line) for f in findings]


# ---------------------------------------------------------------- `input` is not an NPU flag
def test_input_named_tensor_is_cuda_guard_is_reported():
    """dcgan's ``if input.is_cuda and self.ngpu > 1: nn.parallel.data_parallel(...)``: the parameter
    ``input`` (i-n-p-u-t) was read as a flag naming the NPU, which hid both findings."""
    text = """
    import torch.nn as nn

    class G(nn.Module):
        def forward(self, input):
            if input.is_cuda and self.ngpu > 1:
                output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
            else:
                output = self.main(input)
            return output
    """
    got = scan(text, ["DEV015", "DST005"])
    assert codes(got) == [("DEV015", 5), ("DST005", 6)]
    dev015 = got[0]
    assert dev015.fix is None  # the guard keeps the NPU on the single-device path: left as written
    assert got[1].fix is None and got[1].severity == "info"  # dead on an Ascend host under the CUDA test


def test_input_named_device_type_test_is_reported():
    text = """
    import torch

    def g(input):
        if input.device.type == "cuda":
            input = input.contiguous()
        return input
    """
    assert codes(scan(text, ["DEV023"])) == [("DEV023", 4)]


def test_flag_named_for_the_npu_still_excuses():
    text = """
    import torch

    def g(x, use_npu):
        if x.is_cuda or use_npu:
            x = x.contiguous()
        return x
    """
    assert codes(scan(text, ["DEV015"])) == []
