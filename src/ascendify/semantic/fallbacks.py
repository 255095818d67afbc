"""Device tests that send every device but CUDA to a portable path.

``if input.device.type != "cuda": return False`` in stylegan2's ``could_use_op`` (its callers then
take ``F.conv2d``), ``if not x.is_cuda: return reference(x)``: the test is true on an Ascend host,
so the NPU takes the early return, the path CPU and every other device take.  That is correct on
Ascend, not a silently wrong branch; only the CUDA-only path after the test stays off.  What counts,
conservatively: the test is the ``if``'s test (or one side of an ``or`` in it), the ``if`` body
returns at once (no ``raise``, no CUDA name in it), and the rest of the function after the ``if``
names no CUDA API either (a ``torch.cuda.synchronize()`` after it is the work a migration ports:
that test keeps its finding).
"""

from __future__ import annotations

import ast
from typing import Optional

_CUDA_LITERALS = ("cuda",)


def _true_off_cuda(node: ast.AST) -> Optional[ast.AST]:
    """The expression that is true on every device but CUDA: ``d.type != "cuda"`` / ``d not in
    ("cuda", ...)`` (the Compare itself), ``not x.is_cuda`` (the ``not``); else None."""
    if isinstance(node, ast.Compare):
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.NotEq, ast.NotIn)):
            return None
        sides = [node.left, *node.comparators]
        lits = [s for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)]
        if isinstance(node.ops[0], ast.NotIn) and isinstance(node.comparators[0], (ast.Tuple, ast.List, ast.Set)):
            lits = [e for e in node.comparators[0].elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if not lits or any(not str(x.value).startswith(_CUDA_LITERALS) for x in lits):
            return None
        return node
    if isinstance(node, ast.Attribute) and node.attr == "is_cuda":
        p = getattr(node, "_asc_parent", None)
        if isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not):
            return p
    return None


def portable_fallback(node: ast.AST, segment) -> Optional[ast.If]:
    """The ``if`` whose test (``node``, a device test true off CUDA) returns every other device at
    once to a path without CUDA code, before a rest of the function without CUDA code; ``segment``
    gives a node's source text.  None when the shape is not that (then the test is an ordinary one)."""
    expr = _true_off_cuda(node)
    if expr is None:
        return None
    child, p = expr, getattr(expr, "_asc_parent", None)
    while isinstance(p, ast.BoolOp) and isinstance(p.op, ast.Or):
        child, p = p, getattr(p, "_asc_parent", None)
    if not isinstance(p, ast.If) or p.test is not child or not p.body:
        return None
    if not isinstance(p.body[-1], ast.Return):
        return None
    if any(isinstance(s, ast.Raise) for st in p.body for s in ast.walk(st)):
        return None  # `raise ValueError("needs CUDA")`: CUDA-only by intent, not a fallback
    if any("cuda" in segment(st) for st in p.body):
        return None
    fn = getattr(p, "_asc_parent", None)
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None  # an early return only exits a function (the if must be a statement of its body)
    body = fn.body
    idx = next((i for i, st in enumerate(body) if st is p), None)
    if idx is None:
        return None
    rest = body[idx + 1:] + list(p.orelse)
    if any("cuda" in segment(st) for st in rest):
        return None
    return p


# ---------------------------------------------------------------------- "not CPU means CUDA"
def _device_type_of(node: ast.AST) -> bool:
    """``x.device.type`` / ``device.type`` / ``str(x.device)``: a tensor's or device's type."""
    if isinstance(node, ast.Attribute) and node.attr == "type":
        return True
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and len(node.args) == 1
            and isinstance(node.args[0], ast.Attribute) and node.args[0].attr == "device")


def cpu_test_branch(node: ast.AST) -> Optional[list]:
    """The statements an ``if`` runs for every device but the CPU, when ``node`` is its whole test and
    reads ``d.type == "cpu"`` (the ``else``) or ``d.type != "cpu"`` (the body); else None."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
        return None
    a, b = node.left, node.comparators[0]
    if isinstance(a, ast.Constant):
        a, b = b, a
    if not (isinstance(b, ast.Constant) and b.value == "cpu" and _device_type_of(a)):
        return None
    p = getattr(node, "_asc_parent", None)
    if not isinstance(p, ast.If) or p.test is not node:
        return None
    branch = p.orelse if isinstance(node.ops[0], ast.Eq) else p.body
    if not branch and p.body and isinstance(p.body[-1], ast.Return):  # `if cpu: return ref(x)` then the rest
        fn = getattr(p, "_asc_parent", None)
        body = getattr(fn, "body", None) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        idx = next((i for i, st in enumerate(body or ()) if st is p), None)
        branch = body[idx + 1:] if idx is not None else []
    return branch or None


def reaches_names(stmts: list, names: dict, local_reach: dict) -> Optional[tuple]:
    """(name called, what it reaches) for the first call in ``stmts`` rooted at a name of ``names``
    (module-level names bound to CUDA code the project builds) or of ``local_reach`` (this module's
    functions and classes whose own body calls one: ``FusedLeakyReLUFunction.apply(...)``)."""
    for st in stmts:
        for n in ast.walk(st):
            if not isinstance(n, ast.Call):
                continue
            f = n.func
            while isinstance(f, ast.Attribute):
                f = f.value
            if isinstance(f, ast.Name):
                if f.id in names:
                    return f.id, f.id
                if f.id in local_reach:
                    return f.id, local_reach[f.id]
    return None


def local_reach(tree: ast.Module, names: dict) -> dict:
    """Module-level function and class name → the name of ``names`` its own body calls."""
    out: dict = {}
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            got = reaches_names(st.body, names, {})
            if got is not None:
                out[st.name] = got[1]
    return out
