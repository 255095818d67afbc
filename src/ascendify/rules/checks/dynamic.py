"""Dynamic-shape and export rules (DYN): host syncs and data-dependent shapes in
``forward``; ``torch.onnx.export`` settings that matter for ATC."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from ascendify.rules.checks._util import kwarg
from ascendify.rules.registry import check, file_check
from ascendify.semantic.bindings import parent

ATC_MAX_OPSET = 17
"""Highest ONNX opset in ATC's operator list (ONNX 1.12), accuracy-profiling-atc.md §1.5."""

SHAPE_OPS = frozenset({"nonzero", "argwhere", "unique", "unique_consecutive", "masked_select"})
SHAPE_OP_NOTES = {"nonzero": " (NonZero stays on AI Core only for fp16/bool/bf16)", "argwhere": " (a nonzero)"}
_MASK_FUNCS = frozenset({"isnan", "isinf", "isfinite", "isneginf", "isposinf", "logical_not", "logical_and", "logical_or", "logical_xor", "isin"})
_MASK_METHODS = _MASK_FUNCS | {"bool", "eq", "ne", "gt", "ge", "lt", "le"}
_VALUE_METHODS = frozenset({"any", "all", "sum", "max", "min", "mean", "norm", "equal", "allclose", "prod", "amax", "amin", "count_nonzero"})


# ---------------------------------------------------------------- DYN001
def _feeds_shape(node: ast.AST, ctx) -> bool:
    """The value flows (within two levels) into indexing, ``int()``/``range()`` or a torch call."""
    p = parent(node)
    for _ in range(2):
        if isinstance(p, (ast.Subscript, ast.Slice)):
            return True
        if isinstance(p, ast.Call):
            f = p.func
            if isinstance(f, ast.Name) and f.id in ("int", "range"):
                return True
            return (ctx.qualname(f) or "").startswith("torch.")
        p = parent(p) if p is not None else None
    return False


@check("DYN001", ast.Call, names=("item", "tolist"))
def host_sync(node: ast.Call, ctx) -> None:
    f = node.func
    if not isinstance(f, ast.Attribute) or f.attr not in ("item", "tolist") or node.args or node.keywords:
        return
    if ctx.qualname(f) is not None or not ctx.in_forward(node):
        return
    extra = ""
    if _feeds_shape(node, ctx):
        extra = "; used as a size or index it also makes the next shapes data-dependent"
    ctx.report(node, call=f".{f.attr}()", extra=extra)


# ---------------------------------------------------------------- DYN002
@check("DYN002", ast.Call, names=SHAPE_OPS | {"where"})
def shape_op(node: ast.Call, ctx) -> None:
    f = node.func
    if not isinstance(f, ast.Attribute):
        return
    name = f.attr
    if name not in SHAPE_OPS and name != "where":
        return
    q = ctx.qualname(f)
    if q is not None and not q.startswith("torch."):
        return  # numpy.unique, pandas…
    if name == "where":
        if q != "torch.where" or len(node.args) != 1 or node.keywords:
            return
        op = "torch.where(condition)"
    else:
        op = q or f".{name}()"
    if not ctx.in_forward(node):
        return
    ctx.report(node, op=op, extra=SHAPE_OP_NOTES.get(name, ""))


# ---------------------------------------------------------------- DYN003 / DYN004
def _is_mask(node: Optional[ast.AST], ctx, depth: int = 0) -> bool:
    """True if ``node`` is visibly a boolean tensor expression."""
    if node is None or depth > 4:
        return False
    if isinstance(node, ast.Compare):
        return not any(isinstance(op, (ast.In, ast.NotIn, ast.Is, ast.IsNot)) for op in node.ops)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return _is_mask(node.operand, ctx, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _is_mask(node.left, ctx, depth + 1) or _is_mask(node.right, ctx, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        q = ctx.qualname(node.func)
        if q is not None:
            return q.startswith("torch.") and node.func.attr in _MASK_FUNCS
        return node.func.attr in _MASK_METHODS
    if isinstance(node, ast.Name):
        target = ctx.resolve(node)
        return target is not None and target is not node and _is_mask(target, ctx, depth + 1)
    return False


def _mask_subscript(node: ast.Subscript, ctx) -> bool:
    sl = node.slice
    if isinstance(sl, ast.Tuple):
        return any(_is_mask(e, ctx) for e in sl.elts if not isinstance(e, ast.Slice))
    return not isinstance(sl, ast.Slice) and _is_mask(sl, ctx)


@check("DYN003", ast.Subscript)
def mask_read(node: ast.Subscript, ctx) -> None:
    if not isinstance(node.ctx, ast.Load) or isinstance(node.slice, (ast.Constant, ast.Slice)):
        return
    if not ctx.in_forward(node) or not _mask_subscript(node, ctx):
        return
    ctx.report(node, expr=ctx.segment(node))


@check("DYN004", ast.Subscript)
def mask_write(node: ast.Subscript, ctx) -> None:
    if not isinstance(node.ctx, ast.Store) or isinstance(node.slice, (ast.Constant, ast.Slice)):
        return
    if not ctx.in_forward(node) or not _mask_subscript(node, ctx):
        return
    ctx.report(node, expr=ctx.segment(node))


# ---------------------------------------------------------------- DYN005
def _reads_tensor_value(test: ast.AST, ctx) -> bool:
    for sub in ast.walk(test):
        if not isinstance(sub, ast.Call) or not isinstance(sub.func, ast.Attribute):
            continue
        name = sub.func.attr
        if name not in _VALUE_METHODS:
            continue
        q = ctx.qualname(sub.func)
        if q is None:
            base = sub.func.value
            if isinstance(base, ast.Attribute) and base.attr in ("shape", "training"):
                continue
            return True
        if q.startswith("torch."):  # torch.any(m); numpy/math calls are host values
            return True
    return False


@check("DYN005", ast.If, ast.While)
def tensor_branch(node, ctx) -> None:
    test = node.test
    if isinstance(test, (ast.Name, ast.Attribute, ast.Constant)):
        return
    if not ctx.in_forward(node) or not _reads_tensor_value(test, ctx):
        return
    kind = "while" if isinstance(node, ast.While) else "if"
    text = ctx.segment(test)
    if len(text) > 60:
        text = text[:57] + "..."
    ctx.report(test, kind=kind, test=text)


# ---------------------------------------------------------------- DYN006 / DYN007 / DYN008
def _onnx_export(node: ast.Call, ctx) -> bool:
    f = node.func
    return isinstance(f, ast.Attribute) and f.attr == "export" and ctx.call_name(node) == "torch.onnx.export"


def _has_star_kwargs(node: ast.Call) -> bool:
    return any(k.arg is None for k in node.keywords)


@check("DYN006", ast.Call, names=("export",))
def export_static(node: ast.Call, ctx) -> None:
    if not _onnx_export(node, ctx) or _has_star_kwargs(node) or len(node.args) > 3:
        return
    if kwarg(node, "dynamic_axes") is not None or kwarg(node, "dynamic_shapes") is not None:
        return
    ctx.report(node)


def _int_value(node: Optional[ast.AST], ctx) -> Optional[int]:
    target = ctx.resolve(node)
    if isinstance(target, ast.Constant) and isinstance(target.value, int) and not isinstance(target.value, bool):
        return target.value
    return None


@check("DYN007", ast.Call, names=("export",))
def export_opset(node: ast.Call, ctx) -> None:
    if not _onnx_export(node, ctx) or _has_star_kwargs(node) or len(node.args) > 3:
        return
    v = kwarg(node, "opset_version")
    if v is None:
        ctx.report(
            node,
            severity="info",
            detail="`torch.onnx.export` without `opset_version`: torch picks its default (20 in torch 2.13), "
            f"above the opset {ATC_MAX_OPSET} ATC's operator list covers; pin 11–{ATC_MAX_OPSET}",
        )
        return
    opset = _int_value(v, ctx)
    if opset is not None and opset > ATC_MAX_OPSET:
        where = ctx.arg_default_for(v)
        ctx.report(
            where.node if where is not None else v,
            detail=f"ONNX opset {opset} is newer than ATC's operator list covers (ONNX 1.12, opset ≤ {ATC_MAX_OPSET}); "
            "expect 'No parser is registered for Op' — export with 11–17",
        )


@dataclass
class _Dyn008:
    """ONNX export calls the walk saw, and the first input normalisation outside ``forward``."""

    exports: list = field(default_factory=list)
    norm: Optional[ast.AST] = None


def _dyn8(ctx) -> _Dyn008:
    return ctx.state(_Dyn008)


def _mentions(node: ast.AST, word: str) -> bool:
    if isinstance(node, ast.Name):
        return word in node.id.lower()
    if isinstance(node, ast.Attribute):
        return word in node.attr.lower()
    if isinstance(node, ast.Subscript):
        return _mentions(node.value, word)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):  # torch.tensor(MEAN).view(...)
        return _mentions(node.func.value, word) or any(_mentions(a, word) for a in node.args)
    return False


def _note_norm(node: ast.AST, ctx) -> None:
    if ctx.in_forward(node):
        return
    st = _dyn8(ctx)
    if st.norm is None or node.lineno < st.norm.lineno:
        st.norm = node


@check("DYN008", ast.Call, names=("export", "Normalize", "normalize"))
def export_and_normalize_calls(node: ast.Call, ctx) -> None:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if name == "export":
        if _onnx_export(node, ctx):
            _dyn8(ctx).exports.append(node)
    elif name in ("Normalize", "normalize"):
        q = ctx.qualname(f) or ""
        if q.startswith("torchvision.transforms") or (name == "Normalize" and "transforms" in (ctx.dotted(f) or "")):
            _note_norm(node, ctx)


@check("DYN008", ast.BinOp)
def normalize_arith(node: ast.BinOp, ctx) -> None:
    if not isinstance(node.op, ast.Div) or not isinstance(node.left, ast.BinOp) or not isinstance(node.left.op, ast.Sub):
        return
    if _mentions(node.left.right, "mean") and _mentions(node.right, "std"):
        _note_norm(node, ctx)


@file_check("DYN008")
def report_norm_outside(ctx) -> None:
    st = ctx.peek_state(_Dyn008)
    if st is None or not st.exports or st.norm is None:
        return
    for call in st.exports:
        ctx.report(call, line=st.norm.lineno)
