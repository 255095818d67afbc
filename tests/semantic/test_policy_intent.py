"""A guard whose body reaches CUDA-only code is intent and stays (issue 19): project-built CUDA
extensions, stock Triton kernels, apex/amp_C, cupy — `if x.is_cuda:` becoming `x.is_npu` sent NPU
tensors into CUDA-only code (fairseq's alignment binding, whisper's Triton median filter)."""

from __future__ import annotations

import textwrap

import pytest

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import read_source

CASES = {
    "relative_triton_module": ("""
        def median_filter(x, w):
            if x.is_cuda:
                from .triton_ops import median_filter_cuda
                return median_filter_cuda(x, w)
            return x
        """, "triton"),
    "project_extension": ("""
        import alignment_train_cuda_binding


        def align(x):
            if x.is_cuda:
                return alignment_train_cuda_binding.forward(x)
            return x
        """, "cuda_build"),
    "triton_launch": ("""
        import triton


        @triton.jit
        def _kernel(x_ptr):
            pass


        def launch(x):
            if x.is_cuda:
                _kernel[(1,)](x)
            return x
        """, "triton"),
    "amp_C": ("""
        import amp_C


        def norm(x):
            if x.is_cuda:
                return amp_C.multi_tensor_l2norm(x)
            return x
        """, "apex"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_guard_of_cuda_only_code_is_intent_and_stays(tmp_path, name):
    code, lib = CASES[name]
    p = tmp_path / "m.py"
    p.write_text("import torch\n" + textwrap.dedent(code), encoding="utf-8")
    s = Settings(unsafe_fixes=True).validate()
    src = read_source(str(p))
    found = analyze_source(src, "m.py", s)
    guard = [f for f in found if f.code == "DEV015"]
    assert len(guard) == 1 and guard[0].fix is None and guard[0].severity == "warning"
    assert [n.kind for n in guard[0].notes] == ["intent"] and f"CUDA-only by intent ({lib})" in guard[0].notes[0].text
    assert f"CUDA-only by intent ({lib})" not in guard[0].message  # a note beside the message, not spliced into it
    text = fix_source(src, found, s, "m.py")[0]
    assert "is_npu" not in text and text.count("x.is_cuda") == 1


def test_a_plain_cuda_guard_is_still_fixed(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("import torch\n\n\ndef f(x):\n    if x.is_cuda:\n        torch.cuda.synchronize()\n    return x\n", encoding="utf-8")
    s = Settings().validate()
    src = read_source(str(p))
    text = fix_source(src, analyze_source(src, "m.py", s), s, "m.py")[0]
    assert "if x.is_npu:" in text and "torch.npu.synchronize()" in text


TESTS = '''
import unittest

import torch

DEVICES = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


@unittest.skipIf(not torch.cuda.is_available(), "needs CUDA")
class TestCuda(unittest.TestCase):
    def test_sync(self):
        x = torch.ones(2).cuda()
        torch.cuda.synchronize()
'''


@pytest.mark.parametrize("target,devices", [("npu", 'DEVICES = ["cpu", "npu"] if torch.npu.is_available() else ["cpu"]'),
                                            ("agnostic", 'DEVICES = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]')])
def test_device_lists_and_gated_test_bodies(tmp_path, target, devices):
    """The device list under a CUDA test gets the NPU entry without the CUDA ones (npu) or stays
    (agnostic); a test class skipped without CUDA keeps its body as written, with its gate."""
    p = tmp_path / "test_ops.py"
    p.write_text(TESTS, encoding="utf-8")
    s = Settings(target=target).validate()
    src = read_source(str(p))
    text = fix_source(src, analyze_source(src, "test_ops.py", s), s, "test_ops.py")[0]
    assert devices in text
    assert "torch.ones(2).cuda()" in text and "torch.cuda.synchronize()" in text
