"""CUDA-only libraries reached through their API surface (EXT012–EXT016).

Which library a method name, keyword option or string literal belongs to, and
what to do on Ascend instead, is data: ``rules/data/cuda_only.toml`` (the same
table the semantic model reads).  These rules only report: code that is
CUDA-only by intent is never rewritten.

Division of labour with the import rules: an import of a library that
``thirdparty.json`` covers (apex, flash_attn, xformers, bitsandbytes, triton,
cupy, pycuda, numba.cuda, NVML) is reported by EXT002–EXT007/EXT010; EXT016
reports the table's other imports (TensorRT, DeepSpeed's CUDA-only ops, …).
A call through such an import (``trt.Builder``, ``bnb.optim.AdamW8bit``) is the
import's finding; EXT012 reports the calls that reach the library without one.
"""

from __future__ import annotations

import ast
import re
import sys
from functools import lru_cache
from importlib import resources
from types import SimpleNamespace
from dataclasses import dataclass, field
from typing import Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ascendify.rules.checks import thirdparty
from ascendify.rules.registry import check, file_check
from ascendify.semantic.bindings import ancestors, parent


@lru_cache(maxsize=1)
def libs() -> tuple:
    """The ``[[lib]]`` entries of ``cuda_only.toml`` (dicts, in file order)."""
    text = resources.files("ascendify.rules").joinpath("data").joinpath("cuda_only.toml").read_text(encoding="utf-8")
    return tuple(tomllib.loads(text)["lib"])


def _index(field: str) -> dict:
    out: dict = {}
    for lib in libs():
        for key in lib[field]:
            out.setdefault(key, lib)
    return out


_API = _index("api")
_STRINGS = _index("strings")
_AVAIL = {a: lib["name"] for lib in libs() for a in lib["availability"]}
_OPTIONS: dict = {}  # keyword -> [(required value or None, lib)]
for _lib in libs():
    for _opt in _lib["options"]:
        _kw, _, _val = _opt.partition("=")
        _OPTIONS.setdefault(_kw, []).append((_val or None, _lib))
_BY_NAME = {lib["name"]: lib for lib in libs()}
_STRING_PREFIXES = tuple(_STRINGS)
_REQUIREMENT_TAIL = re.compile(r"\s*(\[|[<>=!~@;])")  # "onnxruntime-gpu>=1.17", "xformers[cu121]"


def _under(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _note(lib: dict, guard: Optional[str]) -> str:
    text = "" if lib["verified"] else " (NPU fact unverified)"
    if guard:
        guard = " ".join(guard.split())
        guard = guard if len(guard) <= 60 else guard[:57] + "..."
        text += f" (only under `{guard}`, false on an Ascend host: the code runs without it, add the NPU path)"
    return text


def _token(node: ast.AST, name: str) -> SimpleNamespace:
    """The location of the trailing name ``name`` of an Attribute (``x.attr``): the token to change."""
    end_line = node.end_lineno  # type: ignore[attr-defined]
    end_col = node.end_col_offset  # type: ignore[attr-defined]
    token = SimpleNamespace(lineno=end_line, col_offset=end_col - len(name.encode("utf-8")), end_lineno=end_line, end_col_offset=end_col)
    token._asc_parent = node  # so that whoever walks a finding's parents (the semantic model) sees where it sits
    return token


def _called_name(call: ast.Call) -> Optional[str]:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


# ---------------------------------------------------------------- guards
def _is_cuda_test(node: ast.AST, ctx) -> bool:
    q = ctx.qualname(node.func) if isinstance(node, ast.Call) else None
    return q in ("torch.cuda.is_available", "torch.cuda.device_count")


def _test_mentions(test: ast.AST, lib: dict, ctx, follow: bool = True) -> Optional[str]:
    """Text of ``test`` if it tests ``lib``'s availability (its availability names, one of its
    strings in a comparison, ``torch.cuda.is_available()``), following simple names once."""
    for sub in ast.walk(test):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            target = ctx.resolve(sub) if follow else None
            if target is not None and target is not sub and _test_mentions(target, lib, ctx, follow=False):
                return ctx.segment(test)
            if _AVAIL.get(sub.id) == lib["name"]:
                return ctx.segment(test)
        elif isinstance(sub, ast.Attribute) and _AVAIL.get(sub.attr) == lib["name"]:
            return ctx.segment(test)
        elif isinstance(sub, ast.Call) and _is_cuda_test(sub, ctx):
            return ctx.segment(test)
        elif isinstance(sub, ast.Compare):
            for c in ast.walk(sub):
                if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value in lib["strings"]:
                    return ctx.segment(test)
    return None


def _guard(node: ast.AST, lib: dict, ctx) -> Optional[str]:
    """The guard (``if``/conditional expression test) that makes ``node`` run only where ``lib`` is usable."""
    child = node
    for p in ancestors(node):
        if isinstance(p, (ast.If, ast.IfExp, ast.While)) and child is not p.test:
            body = p.body if isinstance(p.body, list) else [p.body]
            test, in_body = p.test, child in body
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, in_body = test.operand, not in_body
            if in_body:
                found = _test_mentions(test, lib, ctx)
                if found:
                    return found
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return None
        child = p
    return None


# ---------------------------------------------------------------- EXT012: API calls
@check("EXT012", ast.Call, names=tuple(_API))
def api_call(node: ast.Call, ctx) -> None:
    f = node.func
    name = _called_name(node)
    lib = _API.get(name) if name else None
    if lib is None:
        return  # keyed by what an imported name imports (`as` alias): the name called is not the table's
    q = ctx.call_name(node)
    if q is not None and _under(q, lib["imports"]):
        return  # through an import of the library: the import's finding
    if isinstance(f, ast.Name):
        if q is None:
            return  # a function of the project's own (or a fallback stub), not the library's
        at = f
    else:
        if q is None and any(ctx.has_import(m) for m in lib["imports"]):
            return  # a method of the library's own objects (builder.build_serialized_network): the import is the finding
        at = _token(f, name)
    guard = _guard(node, lib, ctx)
    ctx.report(at, severity="warning" if guard else None, api=name, lib=lib["name"], alternative=lib["alternative"], note=_note(lib, guard))


# ---------------------------------------------------------------- EXT013: keyword options
@check("EXT013", ast.keyword, names=tuple(_OPTIONS))
def option_keyword(node: ast.keyword, ctx) -> None:
    entries = _OPTIONS[node.arg]  # keyed: only keywords the table names
    call = parent(node)
    if isinstance(call, ast.Call) and _called_name(call) in _API:
        return  # BitsAndBytesConfig(load_in_4bit=True): EXT012 reports the call
    value = ctx.resolve(node.value)
    for wanted, lib in entries:
        if wanted is None:
            if isinstance(value, ast.Constant) and not value.value:
                continue  # load_in_8bit=False
            shown = f"{node.arg}={ctx.segment(node.value)}"
        else:
            if ctx.resolve_str(node.value) != wanted:
                continue
            shown = f'{node.arg}="{wanted}"'
        guard = _guard(node, lib, ctx)
        ctx.report(node, severity="warning" if guard else None, option=shown, lib=lib["name"], alternative=lib["alternative"], note=_note(lib, guard))
        return


# ---------------------------------------------------------------- EXT014: string literals
_MESSAGE_CALLS = frozenset({
    "print", "debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log", "warning_once",
    "info_once", "warning_advice", "echo", "secho", "write", "add_note", "report",
})
_PROBE_CALLS = frozenset({
    "find_spec", "find_loader", "_is_package_available", "is_package_available", "_is_available", "version",
    "require_version", "requires_backends", "which", "get_distribution", "distribution", "metadata",
    "importlib_metadata_version",
})
_LOOKUP_METHODS = frozenset({"remove", "discard", "index", "count", "startswith", "endswith", "get", "pop", "__contains__"})
_SKIP_KEYWORDS = frozenset({"choices", "help", "metavar", "msg", "message", "description"})


_MATCH_VALUE = tuple(t for t in (getattr(ast, "MatchValue", None),) if t is not None)
_NOT_A_USE = (ast.Compare, ast.JoinedStr, ast.Assert, ast.Raise) + _MATCH_VALUE


def _string_is_selection(node: ast.Constant, ctx) -> bool:
    """False for a literal that only names the library: docstring, message, test, probe, lookup, key."""
    child: ast.AST = node
    for p in ancestors(node):
        if isinstance(p, ast.Expr):
            return p.value is not node  # a docstring or bare string statement names, a call statement uses
        if isinstance(p, _NOT_A_USE):
            return False  # comparison / membership test, f-string text, assert or raise message, case pattern
        if isinstance(p, ast.Subscript) and child is not p.value:
            return False  # d["xformers"], Literal["xformers", "sdpa"]
        if isinstance(p, ast.Dict) and child in p.keys:
            return False  # a table keyed by backend name lists choices, it selects none
        if isinstance(p, ast.keyword) and p.arg in _SKIP_KEYWORDS:
            return False
        if isinstance(p, ast.Call) and child is not p.func:
            name = _called_name(p)
            if name in _MESSAGE_CALLS or name in _PROBE_CALLS or name in _LOOKUP_METHODS:
                return False
            if name in thirdparty._SHELL_NAMES and node.value == "nvidia-smi":
                return False  # EXT010 reports nvidia-smi run through a shell call
        if isinstance(p, ast.stmt):
            cls = parent(p)
            return not (isinstance(p, (ast.Assign, ast.AnnAssign)) and isinstance(cls, ast.ClassDef) and _is_enum(cls))
        child = p
    return True


def _is_enum(cls: ast.ClassDef) -> bool:
    for b in cls.bases:
        text = b.attr if isinstance(b, ast.Attribute) else b.id if isinstance(b, ast.Name) else ""
        if text.endswith("Enum"):
            return True
    return False


def _string_lib(value: str) -> Optional[tuple]:
    lib = _STRINGS.get(value)
    if lib is not None:
        return value, lib
    for s in _STRINGS:
        if value.startswith(s) and _REQUIREMENT_TAIL.match(value, len(s)):
            return s, _STRINGS[s]
    return None


def _option_value(node: ast.Constant, ctx) -> bool:
    """Is the literal the value of a keyword EXT013 reports (``backend="tensorrt"``)?"""
    p = parent(node)
    if not isinstance(p, ast.keyword) or p.arg not in _OPTIONS:
        return False
    return any(wanted == node.value for wanted, _lib in _OPTIONS[p.arg])


@check("EXT014", ast.Constant)
def string_literal(node: ast.Constant, ctx) -> None:
    value = node.value
    if value.__class__ is not str or not value.startswith(_STRING_PREFIXES):
        return
    hit = _string_lib(value)
    if hit is None or _option_value(node, ctx) or not _string_is_selection(node, ctx):
        return
    matched, lib = hit
    guard = _guard(node, lib, ctx)
    severity = None
    note = _note(lib, guard)
    if guard:
        severity = "warning"
    elif lib["name"] == "onnxruntime_cuda" and matched.endswith("ExecutionProvider"):
        severity = "silent"
        note += " (onnxruntime warns and runs the model on the CPU)"
    ctx.report(node, severity=severity, value=matched, lib=lib["name"], alternative=lib["alternative"], note=note)


# ---------------------------------------------------------------- EXT015: ProfilerActivity.CUDA
@check("EXT015", ast.Attribute, names=("CUDA",))
def profiler_activity(node: ast.Attribute, ctx) -> None:
    q = ctx.qualname(node)  # keyed: node.attr is "CUDA"
    if q is not None:
        if not (q.endswith(".ProfilerActivity.CUDA") and q.startswith("torch.")):
            return
    else:
        v = node.value
        if (v.attr if isinstance(v, ast.Attribute) else v.id if isinstance(v, ast.Name) else None) != "ProfilerActivity":
            return
    lib = _BY_NAME["profiler_cuda"]
    ctx.report(_token(node, "CUDA"), alternative=lib["alternative"])


# ---------------------------------------------------------------- EXT016: imports the import rules miss
@lru_cache(maxsize=1)
def _import_roots() -> frozenset:
    return frozenset(m.split(".")[0] for lib in libs() for m in lib["imports"])


def _covered(name: str) -> bool:
    """Does an existing import rule (thirdparty.json) report the module ``name``?"""
    return any(thirdparty._lookup(code, name) for code in thirdparty._table()["imports"])


def _import_lib(name: str) -> Optional[tuple]:
    """(the table's module prefix that ``name`` is or is inside, its library), or None."""
    if name.split(".", 1)[0] not in _import_roots() or _covered(name):
        return None
    best = None
    for lib in libs():
        for m in lib["imports"]:
            if _under(name, (m,)) and (best is None or len(m) > len(best[0])):
                best = (m, lib)
    return best


@check("EXT016", ast.Import, ast.ImportFrom)
def library_import(node, ctx) -> None:
    hits = []  # (imported name, table prefix, library)
    if isinstance(node, ast.Import):
        for a in node.names:
            m = _import_lib(a.name)
            if m:
                hits.append((a.name,) + m)
    elif node.module and not node.level:
        for a in node.names:
            m = _import_lib(f"{node.module}.{a.name}") if a.name != "*" else None
            if m:
                hits.append((f"{node.module}.{a.name}",) + m)
        if not hits:
            m = _import_lib(node.module)
            if m:
                hits.append((node.module,) + m)
    if hits:
        ctx.state(_Ext016).imports.append((node, hits))


@dataclass
class _Ext016:
    """Imports of CUDA-only libraries the walk saw: (import node, hits)."""

    imports: list = field(default_factory=list)


@file_check("EXT016")
def library_import_report(ctx) -> None:
    """After the walk, in file order; a plain ``import pkg.sub`` after an import of the same library is not reported again."""
    seen: set = set()
    for node, hits in sorted(ctx.state(_Ext016).imports, key=lambda t: (t[0].lineno, t[0].col_offset)):
        lib = hits[0][2]
        keys = {h[1] for h in hits}
        if isinstance(node, ast.Import) and keys <= seen:
            continue  # `import tensorrt.plugin` after `import tensorrt`
        seen |= keys
        if isinstance(node, ast.ImportFrom):
            what = f"`from {node.module} import {', '.join(a.name for a in node.names)}`"
        else:
            what = f"`import {hits[0][0]}`"
        note = _note(lib, None)
        severity = None
        guarded = thirdparty.guard_note(node)
        if guarded:
            severity = "warning"
            note += guarded
        ctx.report(node, severity=severity, what=what, lib=lib["name"], alternative=lib["alternative"], note=note)
