"""Second source for the per-release tables: op-plugin's multi-version ``op_plugin_functions.yaml``.

Input: ``<shared>/data/op_plugin/<branch>/op_plugin_functions.yaml`` (Ascend/op-plugin GitHub
mirror, commit per branch in data/README.md §2, BSD-3-Clause).  Expanding the
file for torch ``vX.Y`` gives the aten ops that branch compiles for that torch
line with their implementation paths (reference/op-support-and-versions.md §1.2).
The wheel is the primary source; this module reports where the branch tip
disagrees with a wheel, so both views are kept.
"""

from __future__ import annotations

import os
import re


def _vkey(v: str) -> tuple:
    m = re.match(r"v(\d+)\.(\d+)", str(v).strip())
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _covers(spec, ver: str, all_versions: list) -> bool:
    if spec is None:
        return False
    if isinstance(spec, str):
        s = spec.strip()
        if s == "all_version":
            return True
        return ver in [x.strip() for x in s.split(",")]
    if isinstance(spec, list) and len(spec) == 2:
        lo, hi = str(spec[0]).strip(), str(spec[1]).strip()
        hi_k = _vkey(all_versions[-1]) if hi == "newest" else _vkey(hi)
        return _vkey(lo) <= _vkey(ver) <= hi_k
    return False


def expand(path: str, ver: str) -> "dict[str, str]":
    """aten op → ``+``-joined impl paths for torch line ``ver`` (``"v2.7"``)."""
    import yaml
    with open(path, encoding="utf-8") as fh:
        doc = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    allv = [str(v) for v in doc.get("all_version", [])]
    out: dict = {}
    for section in ("official", "symint", "quant", "autograd"):
        for e in doc.get(section) or []:
            if not isinstance(e, dict) or "func" not in e:
                continue
            name = e["func"].split("(")[0].strip()
            impls = [k for k in ("acl_op", "op_api", "dvm") if _covers(e.get(k), ver, allv)]
            if impls:
                prev = set(out.get(name, "").split("+")) - {""}
                out[name] = "+".join(sorted(prev | set(impls)))
    return out


def compare(shared_data: str, release: str, wheel_aten: "dict[str, str]", branch: str = "master") -> dict:
    """Ops where op-plugin ``branch`` (expanded for the release's torch line) and the wheel differ.

    Only ops that op-plugin can know about are compared: torch_npu core framework ops
    (``torch_npu_core``, from the torch_npu repo) are skipped.
    """
    path = os.path.join(shared_data, "op_plugin", branch, "op_plugin_functions.yaml")
    if not os.path.exists(path):
        return {}
    m = re.match(r"(\d+)\.(\d+)", release)
    ver = f"v{m.group(1)}.{m.group(2)}"
    plugin = expand(path, ver)
    diff = {}
    for op, impl in plugin.items():
        w = wheel_aten.get(op)
        if w is None:
            diff[op] = {"op_plugin": impl, "wheel": None}
        elif w != "torch_npu_core" and w != impl:
            diff[op] = {"op_plugin": impl, "wheel": w}
    for op, w in wheel_aten.items():
        if op not in plugin and w != "torch_npu_core":
            diff[op] = {"op_plugin": None, "wheel": w}
    return {"branch": branch, "torch_line": ver, "differences": dict(sorted(diff.items()))}
