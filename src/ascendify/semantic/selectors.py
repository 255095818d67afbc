"""Implementation selectors: names whose string values pick an implementation, not a device.

stylegan2-ada's ops take ``impl='cuda'`` and test ``assert impl in ['ref', 'cuda']`` / ``if impl == 'cuda'
and x.device.type == 'cuda' and _init():`` — ``'cuda'`` names the project's CUDA plugin, ``'ref'`` the
reference code.  Rewritten as a device (``impl=DEVICE_TYPE``, ``impl == 'npu'``), the CPU copy fails the
assert and the NPU copy sends NPU tensors into the CUDA plugin.  A name is a selector when the file
compares it with ``"cuda"`` and with a string that is no device type (``'ref'``, ``'triton'``, ``'naive'``).
"""

from __future__ import annotations

import ast
from typing import Iterable, Optional

from ascendify.semantic.bindings import param_default_of, parent

_DEVICE_WORDS = frozenset({
    "cuda", "npu", "cpu", "xpu", "mps", "hpu", "xla", "meta", "mtia", "musa", "mlu", "ipu", "vulkan",
    "privateuseone", "gpu", "auto", "accelerator", "nccl", "gloo", "hccl", "mpi", "ucc", "",
})


def device_word(s: str) -> bool:
    return s.lower().split(":")[0].strip() in _DEVICE_WORDS


def subject_name(node: ast.AST) -> Optional[str]:
    """``impl`` for ``impl`` and ``self.impl``; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr
    return None


def _strings(node: ast.AST) -> list:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def impl_selectors(tree: ast.AST) -> frozenset:
    """The names of ``tree`` compared with ``"cuda"`` and with a string that names no device."""
    return selectors_of(n for n in ast.walk(tree) if n.__class__ is ast.Compare)


def selectors_of(compares: Iterable[ast.AST]) -> frozenset:
    """:func:`impl_selectors` from the module's ``Compare`` nodes (the scan engine collects them in its
    one walk: no second walk of the tree)."""
    seen: dict = {}
    for n in compares:
        if len(n.ops) != 1:
            continue
        left, right = n.left, n.comparators[0]
        for subj, other in ((left, right), (right, left)):
            name = subject_name(subj)
            if name is None or "device" in name.lower() or name.lower() in ("dev", "type", "device_type"):
                continue
            vals = _strings(other)
            if vals:
                seen.setdefault(name, set()).update(vals)
    return frozenset(k for k, v in seen.items() if "cuda" in v and any(not device_word(s) for s in v))


def selector_literal(node: ast.AST, sel: frozenset) -> bool:
    """A "cuda" that picks an implementation, not a device: the default, keyword value, assigned value or
    compared value of a selector in ``sel`` (stylegan2-ada's ``impl='cuda'``, ``assert impl in
    ['ref', 'cuda']``).  Needs the parent links of the engine's walk."""
    if node.__class__ is not ast.Constant:
        return False
    p = parent(node)
    if isinstance(p, (ast.List, ast.Tuple, ast.Set)):
        node, p = p, parent(p)
    if isinstance(p, ast.keyword):
        return p.arg in sel
    if isinstance(p, ast.arguments):
        return param_default_of(node) in sel
    if isinstance(p, ast.Compare):
        return any(subject_name(x) in sel for x in [p.left, *p.comparators] if x is not node)
    if isinstance(p, ast.Assign):
        return any(subject_name(t) in sel for t in p.targets)
    return False


def _tests_selector(node: ast.AST, sel: frozenset) -> bool:
    return isinstance(node, ast.Compare) and any(subject_name(x) in sel for x in [node.left, *node.comparators])


def selector_test(node: ast.AST, sel: frozenset) -> bool:
    """``impl == 'cuda'`` (a selector's test), or a device test in one ``and`` with it
    (``impl == 'cuda' and x.device.type == 'cuda' and _init()``: the CUDA implementation's own
    guard; an Ascend host takes the other implementation, as the original does)."""
    if _tests_selector(node, sel):
        return True
    p = parent(node)
    if isinstance(p, ast.BoolOp) and isinstance(p.op, ast.And):
        return any(v is not node and _tests_selector(v, sel) for v in p.values)
    return False


def selector_use(node: Optional[ast.AST], sel: frozenset) -> bool:
    """A finding's node is a selector's "cuda" (a literal: :func:`selector_literal`) or its test
    (a comparison or ``s.startswith("cuda")``: :func:`selector_test`)."""
    if node is None or not sel:
        return False
    cls = node.__class__
    if cls is ast.Constant:
        return selector_literal(node, sel)
    if cls is ast.Compare or cls is ast.Call and node.func.__class__ is ast.Attribute and node.func.attr in ("startswith", "endswith"):
        return selector_test(node, sel)
    return False
