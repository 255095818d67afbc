"""Versioned NPU operator knowledge base (``ascendify ops``, probe, OPS rules).

Compact tables derived by ``tools/build_kb.py`` from public torch_npu / torch /
op-plugin / mstt files live in ``ascendify/kb/data``; every table carries its
provenance (package, version, file, commit or sha, licence).  Modules load
their tables lazily on first use.
"""

from __future__ import annotations

import os

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def __getattr__(name: str):
    """Lazy shortcuts: ``ascendify.kb.op_support``, ``aicpu_reason``, ``aicpu_dtype_rules``, ``lookup``."""
    if name in ("op_support", "releases", "resolve_release", "load_release"):
        from ascendify.kb import ops
        return getattr(ops, name)
    if name in ("aicpu_reason", "aicpu_dtype_rules"):
        from ascendify.kb import aicpu
        return getattr(aicpu, name)
    if name == "lookup":
        from ascendify.kb.query import lookup
        return lookup
    raise AttributeError(name)
