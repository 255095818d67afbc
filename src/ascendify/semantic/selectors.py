"""Implementation selectors: names whose string values pick an implementation, not a device.

stylegan2-ada's ops take ``impl='cuda'`` and test ``assert impl in ['ref', 'cuda']`` / ``if impl == 'cuda'
and x.device.type == 'cuda' and _init():`` — ``'cuda'`` names the project's CUDA plugin, ``'ref'`` the
reference code.  Rewritten as a device (``impl=DEVICE_TYPE``, ``impl == 'npu'``), the CPU copy fails the
assert and the NPU copy sends NPU tensors into the CUDA plugin.  A name is a selector when the file
compares it with ``"cuda"`` and with a string that is no device type (``'ref'``, ``'triton'``, ``'naive'``).
"""

from __future__ import annotations

import ast
from typing import Optional

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
    seen: dict = {}
    for n in ast.walk(tree):
        if n.__class__ is not ast.Compare or len(n.ops) != 1:
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
