"""torch_npu import rules (IMP): NPU APIs without ``import torch_npu``, transfer_to_npu.

The node checks only record the first use of each kind; the file checks
report once per file, after the walk, when the file never imports torch_npu.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Optional

from ascendify.config import default_torch_npu
from ascendify.rules.checks._util import fix
from ascendify.rules.registry import check, file_check
from ascendify.semantic.bindings import parent
from ascendify.semantic.torch_api import AUTOLOAD_SINCE
from ascendify.semantic.torch_api import version_tuple as _version_tuple

NPU_DEVICE_RE = re.compile(r"^npu(:\d+)?$")


def version_tuple(version: Optional[str]) -> tuple:
    """``"2.7.1.post11"`` → ``(2, 7, 1)``; anything unparsable → the default target release
    (:func:`ascendify.semantic.torch_api.version_tuple`, the one parser)."""
    return _version_tuple(version, default_torch_npu())


@dataclass
class _ImportState:
    """What the IMP001/IMP002 node checks found: whether the file imports or binds ``torch_npu``,
    the first ``torch_npu`` name use, the first NPU API use ``(node, what)``, and an NPU probe."""

    imported: bool
    bound: bool
    name_use: Optional[ast.AST] = None
    api_use: Optional[tuple] = None
    probed: bool = False  # hasattr(torch, "npu") / getattr(torch, "npu", ...) seen: device-detecting code


def _state(ctx) -> _ImportState:
    return ctx.state(_ImportState, lambda c: _ImportState(
        imported=c.has_import("torch_npu"), bound=any(name == "torch_npu" for _scope, name in c.assignments)))


def _earlier(a: Optional[ast.AST], b: ast.AST) -> bool:
    return a is None or (b.lineno, b.col_offset) < (a.lineno, a.col_offset)


# ---------------------------------------------------------------- IMP001
@check("IMP001", ast.Name, names=("torch_npu",))
def torch_npu_name(node: ast.Name, ctx) -> None:
    if node.id != "torch_npu" or not isinstance(node.ctx, ast.Load):
        return
    st = _state(ctx)
    if st.imported or st.bound or "torch_npu" in ctx.aliases:
        return
    if _earlier(st.name_use, node):
        st.name_use = node


@check("IMP001", ast.Call, names=("import_module", "__import__"))
def dynamic_import(node: ast.Call, ctx) -> None:
    """``importlib.import_module("torch_npu")`` / ``__import__("torch_npu")`` count as an import."""
    if not node.args or not isinstance(node.args[0], ast.Constant) or node.args[0].value != "torch_npu":
        return
    f = node.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    if name in ("import_module", "__import__"):
        _state(ctx).imported = True


@file_check("IMP001")
def report_torch_npu_name(ctx) -> None:
    st = _state(ctx)
    node = st.name_use
    if node is None or st.imported:
        return
    ctx.report(node, fix(ctx.add_import(), operation="add import torch_npu"))


# ---------------------------------------------------------------- IMP002
def _record(ctx, node: ast.AST, what: str) -> None:
    st = _state(ctx)
    if st.imported or version_tuple(ctx.settings.torch_npu) >= AUTOLOAD_SINCE:
        return  # auto-loaded by `import torch`: nothing to report (fix adds no import either)
    if ctx.model.context(node).npu_aware and not _in_test(node):
        return  # under a test for the NPU (`if d.type == "npu":`), which is false unless torch_npu is loaded
    cur = st.api_use
    if cur is None or _earlier(cur[0], node):
        st.api_use = (node, what)


@check("IMP002", ast.Attribute, names=("npu",))
def npu_attribute(node: ast.Attribute, ctx) -> None:
    if node.attr != "npu":
        return
    base = ctx.qualname(node.value)
    if base == "torch":
        _record(ctx, node, "`torch.npu`")
    elif base is None:
        p = parent(node)
        if isinstance(p, ast.Call) and p.func is node:
            _record(ctx, p, "`.npu()`")


@check("IMP002", ast.Constant)
def npu_string(node: ast.Constant, ctx) -> None:
    v = node.value
    if not isinstance(v, str) or len(v) > 8:
        return
    p = parent(node)
    if v == "npu" and isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id in ("hasattr", "getattr"):
        _state(ctx).probed = True  # hasattr(torch, "npu"): device-detecting code, NPU use is guarded
        return
    if NPU_DEVICE_RE.match(v):
        if isinstance(p, (ast.Tuple, ast.List, ast.Set)):
            p = parent(p)
        if isinstance(p, ast.Compare) or (isinstance(p, ast.Call) and isinstance(p.func, ast.Attribute) and p.func.attr in ("startswith", "endswith")):
            pass  # d.type == "npu" is a test, no use: false unless torch_npu is loaded (the guarded uses are NPU-aware)
        elif isinstance(p, (ast.Call, ast.keyword)):
            _record(ctx, node, f'the "{v}" device')
    elif v.startswith("npu:") and isinstance(p, ast.JoinedStr):
        _record(ctx, p, 'an "npu:N" device')
    elif v == "hccl":
        if isinstance(p, ast.keyword) and p.arg == "backend":
            _record(ctx, node, 'the "hccl" backend')
        elif isinstance(p, ast.Call) and p.args and p.args[0] is node:
            name = ctx.call_name(p) or ""
            if name.endswith("init_process_group") or name.endswith("new_group"):
                _record(ctx, node, 'the "hccl" backend')


def _in_test(node: ast.AST) -> bool:
    """``node`` is (in) the test of its ``if``/``while``: evaluated whatever the test says."""
    child, p = node, parent(node)
    while p is not None and not isinstance(p, ast.stmt):
        child, p = p, parent(p)
    return isinstance(p, (ast.If, ast.While)) and p.test is child


def _is_entry_script(tree: ast.Module) -> bool:
    """A module with a top-level ``if __name__ == "__main__":`` block."""
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare):
            left = stmt.test.left
            if isinstance(left, ast.Name) and left.id == "__name__":
                return True
    return False


@file_check("IMP002")
def report_npu_api(ctx) -> None:
    st = _state(ctx)
    use = st.api_use
    if use is None or st.imported or st.probed:
        return
    if st.name_use is not None and ctx.settings.enabled("IMP001", ctx.path):
        return  # IMP001 reports the file (same fix)
    node, what = use
    target = ctx.settings.torch_npu
    # torch_npu >= 2.5.1 is auto-loaded by `import torch` (torch.backends entry point): _record keeps no use
    entry = ctx.src.is_notebook or _is_entry_script(ctx.tree)
    severity = "error" if entry else "warning"
    detail = f"{what} needs torch_npu loaded; torch_npu {target} is not auto-loaded (autoload starts with 2.5.1)"
    if not entry:
        detail += " — fine only if the entry script imports torch_npu first"
    f = fix(ctx.add_import(), operation="add import torch_npu") if ctx.settings.target == "npu" else None
    ctx.report(node, f, severity=severity, detail=detail)


# ---------------------------------------------------------------- IMP003
@check("IMP003", ast.ImportFrom, ast.Import)
def transfer_to_npu(node, ctx) -> None:
    if isinstance(node, ast.ImportFrom):
        mod = node.module or ""
        if node.level or not mod.startswith("torch_npu"):
            return
        hit = mod.endswith("transfer_to_npu") or (mod == "torch_npu.contrib" and any(a.name == "transfer_to_npu" for a in node.names))
    else:
        hit = any(a.name == "torch_npu.contrib.transfer_to_npu" for a in node.names)
    if hit:
        ctx.report(node)
