"""CUDA code the project builds itself, and the Python names that stand for it (issue 20, item 4).

A project that compiles its own kernels has Python wrappers around them that are CUDA-only
whatever the device code says: stylegan2's ``op/fused_act.py`` binds
``fused = load("fused", sources=[..., "fused_bias_act_kernel.cu"])`` and every function calling
``fused.fused_bias_act(...)`` fails on an Ascend host; detectron2's ``setup.py`` builds
``CUDAExtension("detectron2._C", ...)`` and ``from detectron2 import _C`` makes ``_C.nms(...)``
a CUDA kernel call.  This module finds, per file and without running it:

* :func:`build_kind` — a call that builds or wraps CUDA code: ``cpp_extension.load`` /
  ``load_inline`` of CUDA sources, ``CUDAExtension(...)``, cupy's ``RawKernel`` /
  ``RawModule`` / ``ElementwiseKernel`` / ``ReductionKernel``;
* :func:`extension_objects` — the module-level names bound to such a call (``fused = load(...)``);
* :func:`built_modules` — the dotted names a ``CUDAExtension(name=...)`` builds, as importable
  modules next to the building file (``setup.py``).

Triton kernels (``@triton.jit``) are functions of the file with their own EXT006 finding; the
project pass follows the wrappers that launch them (``kernel[grid](...)``) like any helper.
"""

from __future__ import annotations

import ast
import re
from typing import Optional

_CU_RE = re.compile(r"\.(cu|cuh)$")
_LOAD = frozenset({"torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline"})
_BUILD = frozenset({"torch.utils.cpp_extension.CUDAExtension"})
_CUPY = frozenset({"RawKernel", "RawModule", "ElementwiseKernel", "ReductionKernel"})


def qualname(func: ast.AST, bindings) -> Optional[str]:
    """The dotted name a callee stands for through the file's imports (``load`` after
    ``from torch.utils.cpp_extension import load`` → ``torch.utils.cpp_extension.load``), or None."""
    parts = []
    f = func
    while isinstance(f, ast.Attribute):
        parts.append(f.attr)
        f = f.value
    if not isinstance(f, ast.Name):
        return None
    root = f.id
    for bnd in bindings.resolve(f) if bindings is not None else ():
        if bnd.kind == "import" and bnd.module and not bnd.level:
            root = bnd.module
            break
    return ".".join([root] + list(reversed(parts)))


def _mentions_cu(node: ast.AST, bindings, depth: int = 0) -> bool:
    """A ``.cu``/``.cuh`` string literal inside ``node``, following plain names to their assigned
    values (``sources = [...]; load("m", sources=sources)``), as EXT001 reads them."""
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and _CU_RE.search(n.value):
            return True
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and bindings is not None and depth < 3:
            for bnd in bindings.resolve(n):
                if bnd.kind == "assign" and bnd.value is not None and _mentions_cu(bnd.value, bindings, depth + 1):
                    return True
    return False


def _has_cuda_sources(call: ast.Call, bindings=None) -> bool:
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name == "load_inline":
        for k in call.keywords:
            if k.arg == "cuda_sources":
                return not (isinstance(k.value, ast.Constant) and k.value.value is None)
        return len(call.args) > 2
    srcs = [k.value for k in call.keywords if k.arg == "sources"] + call.args[1:2]
    return any(_mentions_cu(s, bindings) for s in srcs)


def build_kind(call: ast.Call, bindings) -> str:
    """"cuda_build" for a call building CUDA code (``load``/``load_inline`` with CUDA sources,
    ``CUDAExtension``), "cupy" for a cupy kernel object, else ''."""
    f = call.func
    last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if last not in ("load", "load_inline", "CUDAExtension") and last not in _CUPY:
        return ""
    q = qualname(f, bindings) or ""
    if q in _LOAD:
        return "cuda_build" if _has_cuda_sources(call, bindings) else ""
    if q in _BUILD:
        return "cuda_build"
    if last in _CUPY and q.split(".")[0] in ("cupy", "cupyx"):
        return "cupy"
    return ""


def extension_objects(tree: ast.Module, bindings) -> dict:
    """name → the build call, for module-level ``name = <CUDA build or cupy kernel>(...)``
    (``fused = load("fused", sources=[... .cu])``, ``_kernel = cp.RawKernel(code, "k")``)."""
    out: dict = {}
    for st in tree.body:
        value = None
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            value, name = st.value, st.targets[0].id
        elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
            value, name = st.value, st.target.id
        if isinstance(value, ast.Call) and build_kind(value, bindings):
            out[name] = value
    return out


def built_modules(calls: list, bindings) -> dict:
    """dotted module name → the ``CUDAExtension(...)`` call building it (``name=`` or the first
    argument, a string literal)."""
    out: dict = {}
    for c in calls:
        f = c.func
        last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if last != "CUDAExtension" or build_kind(c, bindings) != "cuda_build":
            continue
        name = next((k.value for k in c.keywords if k.arg == "name"), c.args[0] if c.args else None)
        if isinstance(name, ast.Constant) and isinstance(name.value, str) and all(p.isidentifier() for p in name.value.split(".")):
            out[name.value] = c
    return out


def library_of_name(name: ast.Name, bindings) -> str:
    """The CUDA code a name of the file stands for when it is bound at module level to a build
    call (:func:`build_kind`), or ''."""
    for bnd in bindings.resolve(name):
        if bnd.kind == "assign" and isinstance(bnd.value, ast.Call) and bnd.scope is bindings.module_scope:
            kind = build_kind(bnd.value, bindings)
            if kind:
                return kind
    return ""
