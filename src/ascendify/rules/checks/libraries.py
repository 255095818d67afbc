"""EXT017: calls into third-party library code that does CUDA work (library summaries).

The summaries (``ascendify.libsum``, made by ``tools/libsum.py`` from the libraries' PyPI
releases) say, per public function, class and method, what CUDA work it does and under which
keyword.  This check reports the user's call: a function call, a class instantiation, a
``Class.from_pretrained(...)``-style constructor, ``instance(...)`` (``__call__``) and
``instance.method(...)`` where the instance's class is known from its assignment.

Not reported: library paths that name the NPU (npu-aware in the summary, or a library that
dispatches to the NPU itself: accelerate), calls of the switch-on APIs and options EXT012/EXT013
report (``enable_xformers_memory_efficient_attention``, ``load_in_8bit=``), work behind a keyword
the call does not pass, and a ``device="cuda"`` default the call overrides.  Calls into a
CUDA-only library (``bnb.optim.AdamW8bit(...)``) are reported at the call, with what it runs,
besides the import finding of EXT002–EXT005.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import Optional

from ascendify.rules.registry import check

CODE = "EXT017"


def _cuda_only_names() -> tuple:
    from ascendify.rules.checks import cudaonly

    roots = {i.split(".")[0] for lib in cudaonly.libs() for i in lib["imports"]}
    api = {a for lib in cudaonly.libs() for a in lib["api"]}
    options = {o.partition("=")[0] for lib in cudaonly.libs() for o in lib["options"]}
    return frozenset(roots), frozenset(api), frozenset(options)


_CUDA_ROOTS: Optional[frozenset] = None
_API: frozenset = frozenset()
_OPTIONS: frozenset = frozenset()


@dataclass
class _FileLibs:
    """top-level module -> Summary for the summarised libraries the file imports."""

    by_top: dict


def _file_libs(ctx) -> dict:
    """top-level module -> Summary for the summarised libraries this file imports (once per file)."""
    return ctx.state(_FileLibs, lambda c: _FileLibs(_summaries(c))).by_top


def _summaries(ctx) -> dict:
    global _CUDA_ROOTS, _API, _OPTIONS
    if _CUDA_ROOTS is None:
        _CUDA_ROOTS, _API, _OPTIONS = _cuda_only_names()
    from ascendify import libsum

    known = libsum.module_packages()
    tops = {m.split(".")[0] for m in ctx.imported_modules} & set(known)
    got = {}
    if tops:
        pins = libsum.project_pins(os.path.abspath(ctx.src.path)) if getattr(ctx.src, "path", None) else {}
        for t in sorted(tops):
            s = libsum.for_module(t, pins)
            if s is not None:
                got[t] = s
    return got


def _callee_names(func: ast.AST, ctx) -> list:
    """Qualified names a called expression can be: its import (``bnb.optim.AdamW8bit``), or for a
    local name the imported names assigned to it (``optimizer_class = bnb.optim.AdamW8bit`` in one
    branch, ``torch.optim.AdamW`` in the other)."""
    q = ctx.qualname(func)
    if q is not None:
        return [q]
    if not isinstance(func, ast.Name):
        return []
    out = []
    for v in ctx.assigned_values(func)[:8]:
        if isinstance(v, (ast.Name, ast.Attribute)) and v is not func:
            vq = ctx.qualname(v)
            if vq is not None and vq not in out:
                out.append(vq)
    return out


def _class_of(expr: ast.AST, ctx, libs: dict) -> Optional[tuple]:
    """(summary, class qualname) of the library class an expression's value is an instance of:
    ``NativeScaler()``, ``Pipe.from_pretrained(...)``, or a name always assigned one of those."""
    v = ctx.resolve(expr) if isinstance(expr, ast.Name) else expr
    if not isinstance(v, ast.Call):
        return None
    for q in _callee_names(v.func, ctx):
        s = libs.get(q.split(".")[0])
        if s is None:
            continue
        if s.is_class(q):
            return s, s.canonical(q)
        head, _, last = q.rpartition(".")
        if head and last.startswith("from_") and s.is_class(head):
            return s, s.canonical(head)
    return None


def _applies(work: list, call: ast.Call) -> list:
    """The work items this call reaches, given the keywords it passes."""
    kws = {k.arg: k.value for k in call.keywords if k.arg}
    star = any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args)
    out = []
    for w in work:
        cond = w[3]
        if not cond:
            out.append(w)
        elif cond.startswith("!"):
            name, _, pos = cond[1:].partition("@")
            if name in kws or star:
                continue
            if pos and int(pos) >= 0 and len(call.args) > int(pos):
                continue
            out.append(w)
        elif cond.count(":") == 2:
            from ascendify.libsum.analyze import flag_runs

            if flag_runs(cond, {k: (bool(v.value) if isinstance(v, ast.Constant) else None) for k, v in kws.items()}, star):
                out.append(w)
    return out


@check(CODE, ast.Call)
def library_call(node: ast.Call, ctx) -> None:
    libs = _file_libs(ctx)
    if not libs:
        return
    f = node.func
    last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if last in _API or any(k.arg in _OPTIONS for k in node.keywords):
        return  # EXT012/EXT013 report it
    found = None
    names = _callee_names(f, ctx)
    for q in names:
        s = libs.get(q.split(".")[0])
        if s is None:
            continue
        got = s.entry(q)
        if got is None:
            head, _, meth = q.rpartition(".")
            if head and s.is_class(head):
                got = s.method(head, meth)
        if got is not None:
            found = (s, got)
            break
    if found is None and not names:
        inst, meth = None, ""
        if isinstance(f, ast.Name):  # instance(...): __call__
            inst, meth = f, "__call__"
        elif isinstance(f, ast.Attribute) and isinstance(f.value, (ast.Name, ast.Call)):  # instance.method(...)
            inst, meth = f.value, f.attr
        c = _class_of(inst, ctx, libs) if inst is not None else None
        got = c[0].method(c[1], meth) if c is not None else None
        if got is not None:
            found = (c[0], got)
    if found is None:
        return
    s, (defq, entry) = found
    if entry.get("npu_aware") or not entry.get("work"):
        return
    from ascendify import libsum

    noop = libsum.noop_without_cuda()
    work = [w for w in _applies(entry["work"], node) if w[0] not in noop]
    if not work:
        return
    what = ", ".join(dict.fromkeys(w[0] for w in work))
    first = work[0]
    advice, source = s.advice[entry["advice"]] if isinstance(entry.get("advice"), int) else ("", "unverified")
    ctx.report(f, call=ctx.segment(f)[:60], what=what, lib=f"{s.package} {s.version}",
               where=f"{first[1]}:{first[2]}", defined=defq, how=s.how, advice=advice, source=source)
