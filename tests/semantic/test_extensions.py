"""semantic.extensions: CUDA code the project builds, and the names that stand for it (issue 20, item 4)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.context import FileContext
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import read_source
from ascendify.semantic.extensions import build_kind, built_modules, extension_objects


def _ctx(src: str) -> FileContext:
    return FileContext(ast.parse(textwrap.dedent(src)), textwrap.dedent(src))


def _last_call(ctx: FileContext) -> ast.Call:
    return [n for n in ast.walk(ctx.tree) if isinstance(n, ast.Call)][0]


@pytest.mark.parametrize("src, kind", [
    ("from torch.utils.cpp_extension import load\nm = load('m', sources=['a.cpp', 'k.cu'])", "cuda_build"),
    ("from torch.utils.cpp_extension import load\nm = load('m', ['a.cpp', os.path.join(d, 'k.cuh')])", "cuda_build"),
    ("from torch.utils.cpp_extension import load\nm = load('m', sources=['a.cpp'])", ""),  # a CPU extension
    ("from torch.utils.cpp_extension import load\nsrcs = ['a.cpp', 'k.cu']\nm = load('m', sources=srcs)", "cuda_build"),
    ("from torch.utils.cpp_extension import load\nsrcs = ['a.cpp']\nm = load('m', sources=srcs)", ""),
    ("import torch.utils.cpp_extension as ce\nm = ce.load_inline('m', cpp_sources=s, cuda_sources=k)", "cuda_build"),
    ("import torch.utils.cpp_extension as ce\nm = ce.load_inline('m', cpp_sources=s)", ""),
    ("import torch\nm = torch.utils.cpp_extension.load('m', sources=['k.cu'])", "cuda_build"),
    ("from torch.utils.cpp_extension import CUDAExtension\nCUDAExtension('pkg._C', ['a.cpp'])", "cuda_build"),
    ("import cupy as cp\nk = cp.RawKernel(code, 'k')", "cupy"),
    ("import cupy\nk = cupy.ElementwiseKernel('float32 x', 'float32 y', 'y = x')", "cupy"),
    ("from mylib import load\nm = load('m', sources=['k.cu'])", ""),  # not torch's
    ("import json\nm = json.load(fh)", ""),
])
def test_build_kind(src, kind):
    ctx = _ctx(src)
    assert build_kind(_last_call(ctx), ctx.bindings) == kind


def test_extension_objects_are_module_level_names():
    ctx = _ctx("""
        import cupy as cp
        from torch.utils.cpp_extension import load
        fused = load("fused", sources=["fused.cpp", "fused_kernel.cu"])
        _k = cp.RawKernel(CODE, "k")
        other = load("cpu_only", sources=["a.cpp"])

        def f():
            local = load("x", sources=["x.cu"])
    """)
    assert sorted(extension_objects(ctx.tree, ctx.bindings)) == ["_k", "fused"]


def test_built_modules_by_name():
    ctx = _ctx("""
        from setuptools import setup
        from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CppExtension
        setup(name="det", ext_modules=[
            CUDAExtension(name="det._C", sources=["csrc/nms.cpp", "csrc/nms_kernel.cu"]),
            CUDAExtension("fused_ops", ["a.cpp"]),
            CppExtension("det._cpu", ["cpu.cpp"]),
        ], cmdclass={"build_ext": BuildExtension})
    """)
    calls = [n for n in ast.walk(ctx.tree) if isinstance(n, ast.Call)]
    assert sorted(built_modules(calls, ctx.bindings)) == ["det._C", "fused_ops"]


GUARDS = {
    "load_bound": """
        import torch.nn.functional as F
        from torch.utils.cpp_extension import load

        fused = load("fused", sources=["fused_bias_act.cpp", "fused_bias_act_kernel.cu"])


        def fused_act(x, bias):
            if x.is_cuda:
                return fused.fused_bias_act(x, bias)
            return F.leaky_relu(x + bias)
        """,
    "cupy_kernel": """
        import cupy as cp

        _scale = cp.ElementwiseKernel("float32 x", "float32 y", "y = 2 * x", "scale")


        def scale(x):
            if x.is_cuda:
                return _scale(x)
            return 2 * x
        """,
}


@pytest.mark.parametrize("name, lib, todo", [("load_bound", "cuda_build", "Ascend C"), ("cupy_kernel", "cupy", "torch tensors")])
def test_guard_choosing_extension_or_fallback_is_intent(tmp_path, name, lib, todo):
    """`if x.is_cuda: <the project's CUDA extension> else: <fallback>` picks the fallback on Ascend:
    rewriting the guard to `x.is_npu` would send NPU tensors into CUDA kernels (it did)."""
    p = tmp_path / "m.py"
    p.write_text("import torch\n" + textwrap.dedent(GUARDS[name]), encoding="utf-8")
    s = Settings(unsafe_fixes=True).validate()
    src = read_source(str(p))
    found = analyze_source(src, "m.py", s)
    guard = [f for f in found if f.code == "DEV015"]
    assert len(guard) == 1 and guard[0].fix is None and guard[0].severity == "warning"
    said = getattr(guard[0], "full_message", guard[0].message)  # the policy's note (issue 19) or the message
    assert f"CUDA-only by intent ({lib})" in said and todo in said
    text = fix_source(src, found, s, "m.py")[0]
    assert "is_npu" not in text and text.count("x.is_cuda") == 1
