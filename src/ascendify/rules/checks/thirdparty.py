"""Third-party and extension rules (EXT): CUDA extensions, CUDA-only libraries,
DeepSpeed/accelerate device settings, NVML.

Which modules each rule reports, and the replacement it suggests, is data:
``rules/data/thirdparty.json``.
"""

from __future__ import annotations

import ast
import json
import re
from functools import lru_cache
from importlib import resources
from dataclasses import dataclass, field
from typing import Optional

from ascendify.rules.checks import agnostic as agn
from ascendify.rules.checks._util import CUDA_DEVICE_RE, arg, fix, kwarg
from ascendify.semantic.bindings import parent
from ascendify.semantic.bindings import handler_reraises
from ascendify.rules.registry import check, file_check


@lru_cache(maxsize=1)
def _table() -> dict:
    text = resources.files("ascendify.rules").joinpath("data").joinpath("thirdparty.json").read_text(encoding="utf-8")
    return json.loads(text)


@lru_cache(maxsize=1)
def _roots() -> dict:
    """Rule code → top-level module names its table mentions (cheap pre-filter)."""
    return {code: frozenset(k.split(".")[0] for k in mods) for code, mods in _table()["imports"].items()}


def _lookup(code: str, name: str) -> Optional[tuple]:
    """(matched module key, replacement) for the longest key of ``code``'s table that ``name`` is or is inside."""
    if name.split(".", 1)[0] not in _roots().get(code, ()):
        return None
    best = None
    for key, repl in _table()["imports"].get(code, {}).items():
        if name == key or name.startswith(key + "."):
            if best is None or len(key) > len(best[0]):
                best = (key, repl)
    return best


# ---------------------------------------------------------------- imports (EXT002-007, EXT010)
def import_check(node, ctx) -> None:
    code = ctx.current_code
    hits = []
    if isinstance(node, ast.Import):
        for a in node.names:
            m = _lookup(code, a.name)
            if m:
                hits.append((a.name, m))
    elif node.module and not node.level:
        for a in node.names:
            full = f"{node.module}.{a.name}"
            m = _lookup(code, full) if a.name != "*" else None
            if m:
                hits.append((full, m))
        if not hits:
            m = _lookup(code, node.module)
            if m:
                hits.append((node.module, m))
    if not hits:
        return
    if len(hits) > 1 and isinstance(node, ast.ImportFrom):  # from m import a, b -> "m (a, b)"
        name = f"{node.module} ({', '.join(h[0].rsplit('.', 1)[1] for h in hits)})"
    else:
        name = hits[0][0]
    repl = "; ".join(dict.fromkeys(h[1][1] for h in hits if h[1][1]))
    what = f"`import {name}`" if isinstance(node, ast.Import) else f"`{name}`"
    keys = frozenset(h[1][0] for h in hits)
    ctx.state(_ExtImports).by_code.setdefault(code, []).append((node, keys, name, what, repl))


@dataclass
class _ExtImports:
    """Rule code -> the imports the walk saw for it: (node, package keys, name, what, replacement)."""

    by_code: dict = field(default_factory=dict)


def import_report(ctx) -> None:
    """After the walk, in file order: a plain ``import`` whose package entries an earlier import of
    the file already reported (``import triton`` … ``import triton.language as tl``) is not reported again."""
    st = ctx.peek_state(_ExtImports)
    found = st.by_code.get(ctx.current_code) if st is not None else None
    if not found:
        return
    seen: set = set()
    for node, keys, name, what, repl in sorted(found, key=lambda t: (t[0].lineno, t[0].col_offset)):
        if isinstance(node, ast.Import) and keys <= seen:
            continue  # a plain submodule import adds nothing; `from pkg.sub import Api` names what is used
        seen |= keys
        note = guard_note(node)
        if note:
            rule = ctx.rules[ctx.current_code]
            msg = rule.message.format(name=name, what=what, replacement=repl)
            ctx.report(node, severity="warning", message=msg + note)
        else:
            ctx.report(node, name=name, what=what, replacement=repl)


_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")


def import_guard(node: ast.AST) -> Optional[str]:
    """The handler that makes the import optional, as written (``except ImportError``), or None.

    The import must be in the body of a ``try`` with a handler catching ImportError (or
    broader) that falls back; a handler that re-raises (``raise``, ``raise X from e``) is
    no fallback: without the package the code still stops there."""
    p = parent(node)
    if not isinstance(p, ast.Try) or node not in p.body:
        return None
    for h in p.handlers:
        types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
        if h.type is None or any(isinstance(t, ast.Name) and t.id in _IMPORT_ERRORS for t in types):
            if handler_reraises(h):
                continue
            names = [t.id for t in types if isinstance(t, ast.Name)]
            return "except" if h.type is None else f"except {', '.join(names)}" if len(names) == 1 else f"except ({', '.join(names)})"
    return None


def _import_guarded(node: ast.AST) -> bool:
    """Is the import in the body of a ``try`` whose handler catching ImportError (or broader) falls back?"""
    return import_guard(node) is not None


def guard_note(node: ast.AST) -> str:
    """The message suffix for an optional import (empty when the import is not optional)."""
    g = import_guard(node)
    return f" (guarded by `{g}`: the code runs without it; check what the fallback loses)" if g else ""


for _code in _table()["imports"]:
    check(_code, ast.Import, ast.ImportFrom)(import_check)
    file_check(_code)(import_report)


def kernel_decorator(node, ctx) -> None:
    """``@triton.jit`` / ``@numba.cuda.jit`` kernels (each needs porting; reported once per kernel)."""
    code = ctx.current_code
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        q = ctx.qualname(target)
        if q is None or _table()["decorators"].get(q) != code:
            continue
        m = _lookup(code, q) or ("", "")
        ctx.report(d, name=q, what=f"Triton kernel `{node.name}`" if code == "EXT006" else f"`@{q}` kernel `{node.name}`", replacement=m[1])
        return  # once per kernel, even with stacked @autotune/@jit


for _code in sorted(set(_table()["decorators"].values())):
    check(_code, ast.FunctionDef)(kernel_decorator)


# ---------------------------------------------------------------- EXT001
_EXT_CALLS = {
    "torch.utils.cpp_extension.CUDAExtension": "`CUDAExtension`",
    "torch.utils.cpp_extension.CppExtension": "`CppExtension`",
    "torch.utils.cpp_extension.load": "`cpp_extension.load`",
    "torch.utils.cpp_extension.load_inline": "`cpp_extension.load_inline`",
}
_CU_RE = re.compile(r"\.(cu|cuh)$")


def _cu_files(node: Optional[ast.AST], ctx, depth: int = 0) -> list:
    """String literals ending in .cu/.cuh inside a sources expression (following simple names)."""
    if node is None or depth > 3:
        return []
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and _CU_RE.search(sub.value):
            out.append(sub.value)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            target = ctx.resolve(sub)
            if target is not None and target is not sub:
                out += _cu_files(target, ctx, depth + 1)
    return out


@check("EXT001", ast.Call, names=("CUDAExtension", "CppExtension", "load", "load_inline"))
def cuda_extension(node: ast.Call, ctx) -> None:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if name not in ("CUDAExtension", "CppExtension", "load", "load_inline"):
        return
    q = ctx.call_name(node)
    what = _EXT_CALLS.get(q or "")
    if what is None:
        return
    if name == "load_inline":
        cs = kwarg(node, "cuda_sources")
        if cs is None or (isinstance(cs, ast.Constant) and cs.value is None):
            return
        ctx.report(node, what=what, files=" (`cuda_sources`)")
        return
    files = _cu_files(arg(node, 1, "sources"), ctx)
    if name != "CUDAExtension" and not files:
        return
    shown = ", ".join(dict.fromkeys(files[:3]))
    ctx.report(node, what=what, files=f" ({shown}{', …' if len(files) > 3 else ''})" if files else "")


# ---------------------------------------------------------------- EXT018
@dataclass
class _BuiltNames:
    """The file's module-level names bound to CUDA code it builds, and its functions/classes that call them."""

    names: dict
    reach: dict


def _built_names(ctx) -> _BuiltNames:
    from ascendify.semantic.extensions import extension_objects
    from ascendify.semantic.fallbacks import local_reach

    def make(c):
        names = extension_objects(c.tree, c.bindings)
        return _BuiltNames(names, local_reach(c.tree, names) if names else {})
    return ctx.state(_BuiltNames, make)


@check("EXT018", ast.Compare)
def cpu_test_into_extension(node: ast.Compare, ctx) -> None:
    """``if x.device.type == "cpu": reference(x) else: ext_op(x)``: every device but the CPU is taken for
    CUDA, so NPU tensors go into the CUDA code the project builds (stylegan2's fused_act/upfirdn2d)."""
    from ascendify.semantic.fallbacks import cpu_test_branch, reaches_names

    branch = cpu_test_branch(node)
    if branch is None:
        return
    built = _built_names(ctx)
    if not built.names:
        return
    got = reaches_names(branch, built.names, built.reach)
    if got is None:
        return
    called, ext = got
    line = getattr(built.names[ext], "lineno", 0)
    via = f"`{called}`, which calls `{ext}`" if called != ext else f"`{ext}`"
    ctx.report(node, test=ctx.segment(node)[:60], via=via, line=line)


# ---------------------------------------------------------------- EXT008
@check("EXT008", ast.Call, names=("init_distributed",))
def deepspeed_backend(node: ast.Call, ctx) -> None:
    f = node.func
    if not isinstance(f, ast.Attribute) or f.attr != "init_distributed":
        return
    if ctx.call_name(node) not in ("deepspeed.init_distributed", "deepspeed.comm.init_distributed"):
        return
    a = arg(node, 0, "dist_backend")
    backend = ctx.resolve_str(a) if a is not None else None
    if backend is None or backend.lower() != "nccl":
        return
    f_ = None
    where = ctx.arg_default_for(a)
    if ctx.settings.target == "npu":
        lit = where.node if where is not None else a
        if isinstance(lit, ast.Constant):
            f_ = fix(ctx.replace_string(lit, "hccl"), operation='dist_backend "nccl" -> "hccl"')
    else:
        kw = next((k for k in node.keywords if k.arg == "dist_backend"), None)
        if kw is not None:
            rest = [t for k, t in zip(node.args + [k for k in node.keywords], ctx.args_text(node)) if k is not kw]
            f_ = fix(ctx.set_args(node, ", ".join(rest)), operation="drop dist_backend (DeepSpeed picks the accelerator's backend)")
    report_at = where.node if where is not None else a
    ctx.report(report_at, f_, backend=backend)


# ---------------------------------------------------------------- EXT009
@check("EXT009", ast.keyword)
def device_map_cuda(node: ast.keyword, ctx) -> None:
    if node.arg != "device_map":
        return
    v = node.value
    if isinstance(v, ast.Dict):
        for val in v.values:
            if isinstance(val, ast.Constant) and isinstance(val.value, str) and CUDA_DEVICE_RE.match(val.value):
                ctx.report(v, value=ctx.segment(v) if len(ctx.segment(v)) < 40 else "{…: \"cuda\"}")
                return
        return
    s = ctx.resolve_str(v)
    if s is None or not CUDA_DEVICE_RE.match(s):
        return
    f_ = None
    if isinstance(v, ast.Constant):
        if ctx.settings.target == "npu":
            f_ = fix(ctx.replace_string(v, s.replace("cuda", "npu")), operation="device_map cuda -> npu")
        else:
            pre = agn.prelude(ctx)
            if pre is not None:
                idx = s.partition(":")[2]
                text = agn.NAME if not idx else f'f"{{{agn.NAME}}}:{idx}"'
                f_ = fix(ctx.replace(v, text), pre, operation="device_map cuda -> DEVICE_TYPE")
    ctx.report(v, f_, value=ctx.segment(v))


# ---------------------------------------------------------------- EXT010
_SHELL_CALLS = frozenset({
    "subprocess.run", "subprocess.check_output", "subprocess.call", "subprocess.check_call", "subprocess.Popen",
    "subprocess.getoutput", "subprocess.getstatusoutput", "os.system", "os.popen",
})


_SHELL_NAMES = frozenset(n.rsplit(".", 1)[1] for n in _SHELL_CALLS)


@check("EXT010", ast.Call, names=_SHELL_NAMES)
def nvidia_smi(node: ast.Call, ctx) -> None:
    f = node.func
    short = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if not node.args or short not in _SHELL_NAMES:
        return
    first = node.args[0]
    if isinstance(first, (ast.List, ast.Tuple)):
        first = first.elts[0] if first.elts else None
    s = ctx.resolve_str(first) if first is not None else None
    if s is None or not s.lstrip().startswith("nvidia-smi"):
        return
    if ctx.call_name(node) not in _SHELL_CALLS:
        return
    ctx.report(node, what="`nvidia-smi`", name="nvidia-smi", replacement="")
