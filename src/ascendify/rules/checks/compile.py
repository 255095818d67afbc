"""Compile rules (CMP): ``torch.compile`` backend and mode on NPU, TorchScript."""

from __future__ import annotations

import ast

from ascendify.rules.checks._util import fix, kwarg
from ascendify.rules.checks.imports import version_tuple
from ascendify.rules.registry import check

NPU_COMPILE_SINCE = (2, 6, 0)
"""First torch_npu line with inductor / npugraphs support for torch.compile (cmp.toml CMP001)."""
NPU_BACKENDS = frozenset({"npu", "npugraphs", "npugraph_ex"})
_AUTOTUNE_MODES = frozenset({"max-autotune", "max-autotune-no-cudagraphs"})


def _compile_call(node: ast.Call, ctx) -> bool:
    f = node.func
    return isinstance(f, ast.Attribute) and f.attr == "compile" and ctx.call_name(node) == "torch.compile"


@check("CMP001", ast.FunctionDef)
@check("CMP001", ast.Call, names=("compile",))
def compile_backend(node, ctx) -> None:
    if isinstance(node, ast.FunctionDef):  # bare @torch.compile
        for d in node.decorator_list:
            if isinstance(d, ast.Attribute) and d.attr == "compile" and ctx.qualname(d) == "torch.compile":
                _report_inductor(d, ctx)
        return
    if not _compile_call(node, ctx) or any(k.arg is None for k in node.keywords):
        return
    b = kwarg(node, "backend")
    backend = "inductor" if b is None else ctx.resolve_str(b)
    if backend != "inductor":
        return  # npu backends, cudagraphs (CMP002), callables and unknown values
    _report_inductor(node, ctx)


def _report_inductor(node: ast.AST, ctx) -> None:
    target = ctx.settings.torch_npu
    if version_tuple(target) >= NPU_COMPILE_SINCE:
        detail = (
            f"`torch.compile` with the inductor backend on torch_npu {target} needs Triton-Ascend (Atlas A2/A3); "
            'alternatives: backend="npugraphs" (static shapes) or "npugraph_ex"'
        )
        ctx.report(node, severity="info", detail=detail)
    else:
        detail = (
            f"torch_npu {target} has no inductor backend for the NPU (added in 2.6.0); "
            'use backend="npu" (TorchAir graph mode) or upgrade'
        )
        ctx.report(node, detail=detail)


@check("CMP002", ast.Call, names=("compile",))
def compile_cuda_graphs(node: ast.Call, ctx) -> None:
    if not node.keywords or not _compile_call(node, ctx):
        return
    b = kwarg(node, "backend")
    if b is not None and ctx.resolve_str(b) == "cudagraphs":
        f = None
        if ctx.settings.target == "npu" and isinstance(b, ast.Constant) and version_tuple(ctx.settings.torch_npu) >= NPU_COMPILE_SINCE:
            f = fix(ctx.replace_string(b, "npugraphs"), operation='backend "cudagraphs" -> "npugraphs"')
        ctx.report(b, f, detail='backend "cudagraphs" captures CUDA graphs; on NPU use "npugraphs" (torch_npu ≥ 2.6.0)')
    m = kwarg(node, "mode")
    mode = ctx.resolve_str(m) if m is not None else None
    if mode in _AUTOTUNE_MODES:
        ctx.report(m, severity="warning", detail=f'mode="{mode}" is not among the modes torch_npu documents (None, "reduce-overhead")')


@check("CMP003", ast.FunctionDef, ast.ClassDef)
@check("CMP003", ast.Call, names=("script", "trace", "script_method"))
def torchscript(node, ctx) -> None:
    if isinstance(node, ast.Call):
        f = node.func
        if not isinstance(f, ast.Attribute) or f.attr not in ("script", "trace", "script_method"):
            return
        q = ctx.call_name(node)
        if q not in ("torch.jit.script", "torch.jit.trace", "torch.jit.script_method"):
            return
        _report_jit(node, q, ctx)
        return
    for d in node.decorator_list:  # @torch.jit.script (no call)
        q = ctx.qualname(d)
        if q in ("torch.jit.script", "torch.jit.script_method"):
            _report_jit(d, q, ctx)


def _report_jit(node: ast.AST, q: str, ctx) -> None:
    if q == "torch.jit.trace":
        detail = "`torch.jit.trace` works on NPU for fp32 inputs (torch_npu API list); for Ascend deployment export ONNX for ATC instead"
    else:
        detail = f"`{q}`: TorchScript is not an Ascend deployment path, and `transfer_to_npu` turns it into a no-op"
        if ctx.has_import("torch_npu.contrib"):
            detail += " — this file imports torch_npu.contrib, so scripted code runs eagerly"
    ctx.report(node, detail=detail)
