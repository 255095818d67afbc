"""Fix policy from the model: what a finding's branch context does to it.

Applied to a file's findings after the walk (docs/fix-policy.md gives the reasons):

* NPU-aware code (an NPU branch, or the CUDA side of a chain that has one) and
  another accelerator's branch (xpu, mps, hpu, ...) are left alone: no finding;
* CUDA-only-by-intent code (TensorRT, onnxruntime's CUDA provider, xformers, ...)
  is reported with the Ascend alternative and never rewritten;
* an ``except AttributeError/ImportError`` fallback for older versions keeps its
  finding as info, without a fix;
* code under a CUDA-only guard is dead on an Ascend host: the guard is the
  finding.  Its body's findings become info; when the guard's own finding has a
  fix and every finding of the body has one too, all of them get one combined
  fix (the guard and its body change together); otherwise no fix is applied to
  the guard or the body (the guard is left alone, and says why).
"""

from __future__ import annotations

import ast
from typing import Optional

from ascendify.scan.finding import Finding, Fix
from ascendify.semantic.branches import library

POLICY_PREFIXES = ("DEV", "AMP", "DST", "MEM", "EXT")


def _within(node: ast.AST, outer: ast.AST) -> bool:
    n: Optional[ast.AST] = node
    while n is not None:
        if n is outer:
            return True
        n = getattr(n, "_asc_parent", None)
    return False


def _covers(node: ast.AST, origin: ast.AST) -> bool:
    """``node`` is ``origin``, inside it, or holds it (within one expression)."""
    if _within(node, origin) or _within(origin, node):
        return True
    return False


def apply_policy(findings: list, nodes: dict, model) -> list:
    """The findings of one file after the branch policy (see the module docstring)."""
    out: list = []
    groups: dict = {}  # id(origin) -> (origin, [body findings])
    contexts: dict = {}
    for f in findings:
        node = nodes.get(id(f))
        if node is None or not f.code.startswith(POLICY_PREFIXES):
            out.append(f)
            continue
        c = model.context(node)
        contexts[id(f)] = c
        if c.npu_aware or c.other:
            continue
        if c.intent:
            lib = library(c.intent_lib) or {}
            alt = lib.get("alternative", "")
            f.fix = None
            if f.severity in ("error", "silent"):
                f.severity = "warning"
            if not f.code.startswith("EXT"):  # EXT findings name the library and its alternative themselves
                f.message += f" — CUDA-only by intent ({c.intent_lib}): left as written" + (f"; {alt}" if alt else "")
            out.append(f)
            continue
        if c.compat:
            f.fix = None
            f.severity = "info"
            f.message += " — a fallback for older versions in an `except` handler: left as written"
            out.append(f)
            continue
        if c.dead and c.dead_origin is not None:
            groups.setdefault(id(c.dead_origin), (c.dead_origin, []))[1].append(f)
        out.append(f)
    if not groups:
        return out
    for origin, body in groups.values():
        guard = [f for f in out if id(f) in contexts and nodes.get(id(f)) is not None and _covers(nodes[id(f)], origin) and f not in body]
        line = getattr(origin, "lineno", 0)
        fixable_guard = [g for g in guard if g.fix is not None]
        body_ok = all(f.fix is not None for f in body)
        bad = next((f for f in body if f.fix is None), None)
        if fixable_guard and body_ok:
            edits: list = []
            for f in fixable_guard + body:
                for e in f.fix.edits:
                    if e not in edits:
                        edits.append(e)
            safe = all(f.fix.safe for f in fixable_guard + body)
            for f in fixable_guard + body:
                f.fix = Fix(tuple(edits), safe, f.fix.operation)
            for f in body:
                _dead(f, line, " (fixed together with that test)")
        else:
            for f in body:
                f.fix = None
                _dead(f, line, " — fix that test, or add an NPU branch" if guard else "")
            if bad is not None:
                for g in fixable_guard:
                    g.fix = None
                    g.message += f" — left as written: its branch still has CUDA code with no automatic fix ({bad.code} at line {bad.line})"
    return out


def _dead(f: Finding, line: int, tail: str) -> None:
    if f.severity != "info":
        f.severity = "info"
    f.message += f" — dead code on an Ascend host: under the CUDA-only test at line {line}{tail}"
