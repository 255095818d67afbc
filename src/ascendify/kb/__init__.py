"""Versioned NPU operator knowledge base (``ascendify ops``, probe, OPS rules).

Compact tables derived by ``tools/build_kb.py`` from public torch_npu / torch /
op-plugin / mstt files live in ``ascendify/kb/data``; every table carries its
provenance (package, version, file, commit or sha, licence).  Modules load
their tables lazily on first use.
"""

from __future__ import annotations

import os

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
