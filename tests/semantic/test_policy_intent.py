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
    assert f"CUDA-only by intent ({lib})" in guard[0].message
    text = fix_source(src, found, s, "m.py")[0]
    assert "is_npu" not in text and text.count("x.is_cuda") == 1


def test_a_plain_cuda_guard_is_still_fixed(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("import torch\n\n\ndef f(x):\n    if x.is_cuda:\n        torch.cuda.synchronize()\n    return x\n", encoding="utf-8")
    s = Settings().validate()
    src = read_source(str(p))
    text = fix_source(src, analyze_source(src, "m.py", s), s, "m.py")[0]
    assert "if x.is_npu:" in text and "torch.npu.synchronize()" in text
