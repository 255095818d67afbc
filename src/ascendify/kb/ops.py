"""Per-release aten op tables: how an aten overload runs under a torch_npu release.

Data: ``kb/data/index.json`` (release list + counts) and
``kb/data/ops/<torch_npu>.json.gz`` (one row per aten overload: class,
implementation path, torch dispatch keys), built by ``tools/build_kb.py`` from
the torch-npu wheel's ``npu_native_functions_by_codegen.yaml`` joined with
torch's ``native_functions.yaml`` (reference/op-support-and-versions.md §1.1,
§2.1).  Each release file is loaded on first use (a few ms) and cached.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from typing import Any, Optional

from ascendify.kb import DATA_DIR

CLASS_LABELS = {
    "npu_kernel": "NPU kernel",
    "npu_via_structured_out": "NPU kernel via the structured .out variant",
    "npu_foreach_slow": "per-tensor foreach loop of NPU ops (slow path)",
    "composite_implicit": "decomposes into other aten ops (CompositeImplicitAutograd)",
    "composite_explicit": "device-generic kernel (CompositeExplicitAutograd)",
    "not_dense": "no dense kernel (sparse/quantized/nested only)",
    "cpu_fallback": "CPU fallback (no NPU kernel; torch_npu copies to CPU and back)",
    "npu_only_not_in_torch_yaml": "NPU registration for a name absent from torch's native_functions.yaml",
    "unknown": "unknown (not in this release's tables)",
}

SHORT_LABELS = {
    "npu_kernel": "NPU kernel",
    "npu_via_structured_out": "NPU kernel via .out",
    "npu_foreach_slow": "foreach slow path",
    "composite_implicit": "decomposes",
    "composite_explicit": "device-generic",
    "not_dense": "no dense kernel",
    "cpu_fallback": "CPU fallback",
    "npu_only_not_in_torch_yaml": "NPU-only name",
    "unknown": "unknown",
}

IMPL_LABELS = {
    "op_api": "aclnn (op_api)",
    "acl_op": "acl_op (aclop / OpCommand)",
    "dvm": "dvm (fusion path)",
    "torch_npu_core": "torch_npu core (framework op)",
    "sparse_only": "sparse only",
}

FALLBACK_SOURCE = ("torch_npu boxed CPU fallback for PrivateUse1 (torch_npu/csrc/aten/VariableFallbackKernel.cpp, "
                   "npu_cpu_fallback); raises instead with TORCH_NPU_FALLBACK_CPU_DISABLE=1 "
                   "(reference/op-support-and-versions.md §2.1)")

_INDEX: dict = {}
_RELEASES: dict = {}


def _index() -> dict:
    if not _INDEX:
        with open(os.path.join(DATA_DIR, "index.json"), encoding="utf-8") as fh:
            _INDEX.update(json.load(fh))
    return _INDEX


def releases() -> "list[str]":
    """Known torch_npu releases, oldest first (e.g. ``["2.1.0.post17", …, "2.14.0"]``)."""
    return [r["torch_npu"] for r in _index()["releases"]]


def release_info(torch_npu: str) -> dict:
    """Index entry of an exact release (counts, torch version, commit)."""
    for r in _index()["releases"]:
        if r["torch_npu"] == torch_npu:
            return r
    raise KeyError(torch_npu)


def _vkey(v: str) -> "tuple[int, ...]":
    m = re.match(r"^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?post(\d+))?", str(v))
    if not m:
        return ()
    return tuple(int(x) if x is not None else -1 for x in m.groups())


def resolve_release(torch_npu: Optional[str]) -> "tuple[str, Optional[str]]":
    """Map a requested torch_npu version to a known release.

    Exact match → (release, None).  A bare ``X.Y.Z`` → the newest ``.postN``
    of that line, without a note; a bare ``X.Y`` (or ``X``) → the newest known
    release of that series (``2.7`` → ``2.7.1.post11``), without a note;
    ``X.Y.Z.postN`` not in the KB → the known
    release of that line with a note.  Otherwise the newest known release at
    or below it (the oldest when it is older than every known one), with a
    warning naming both.  ``None`` → the newest release.  A string that is not
    a version raises ``ValueError``.
    """
    rels = releases()
    if torch_npu is None or str(torch_npu).strip() == "":
        return rels[-1], None
    req = str(torch_npu).strip().lstrip("v").split("+")[0]
    if req in rels:
        return req, None
    k = _vkey(req)
    if not k:
        raise ValueError(f"'{torch_npu}' is not a torch_npu version (expected e.g. 2.7.1 or 2.7.1.post11)")
    same = [r for r in rels if _vkey(r)[:3] == k[:3]]
    if same:
        if k[3] == -1:  # "2.7.1" names the line: its newest post release, no warning needed
            return same[-1], None
        return same[-1], (f"torch_npu {req} is not in the KB; using the data of torch_npu {same[-1]} "
                          f"(same torch {'.'.join(map(str, k[:3]))} line)")

    if k[3] == -1 and k[2] == -1:  # "2.7" (or "2") names a series: its newest known release, no warning needed
        parts = 1 if k[1] == -1 else 2
        series = [r for r in rels if _vkey(r)[:parts] == k[:parts]]
        if series:
            return series[-1], None
    # the newest known release at or below the one asked for (9.9.9 -> the newest, 2.2.0 -> 2.1.0); the
    # oldest when it is older than all (the old distance weighed minor numbers across majors: 9.9.9 got 2.9.0)
    below = [r for r in rels if _vkey(r) <= k]
    if below:
        best = below[-1]
        where = "the newest the KB knows" + ("" if best == rels[-1] else f" at or below {req}")
    else:
        best, where = rels[0], "the oldest the KB knows; none is older"
    return best, f"torch_npu {req} is not in the KB; using the nearest known release torch_npu {best} instead ({where})"


class Release:
    """One release's table: ``ops[overload] = (class, npu_impl, torch_dispatch_keys)``."""

    __slots__ = ("torch_npu", "torch", "ops", "custom", "meta")

    def __init__(self, doc: dict):
        classes = doc["classes"]
        self.torch_npu = doc["torch_npu"]
        self.torch = doc["torch"]
        self.ops = {k: (classes[v[0]] if isinstance(v[0], int) else v[0], v[1], v[2]) for k, v in doc["ops"].items()}
        self.custom = doc.get("custom", {})
        self.meta = {k: v for k, v in doc.items() if k not in ("ops", "custom")}

    def overloads(self, name: str) -> "list[str]":
        """All overloads of base name ``name`` (``"nanmean"`` → ``["nanmean", "nanmean.out"]``)."""
        pre = name + "."
        return sorted(k for k in self.ops if k == name or k.startswith(pre))


def load_release(torch_npu: str) -> Release:
    """Load (and cache) the table of an exact known release; ``KeyError`` if unknown."""
    rel = _RELEASES.get(torch_npu)
    if rel is None:
        info = release_info(torch_npu)
        with gzip.open(os.path.join(DATA_DIR, info["file"]), "rb") as fh:
            rel = Release(json.loads(fh.read().decode("utf-8")))
        _RELEASES[torch_npu] = rel
    return rel


def normalize_op(op: str) -> str:
    """``"aten::nanmean.default"`` / ``"torch.ops.aten.nanmean.out"`` → ``"nanmean"`` / ``"nanmean.out"``."""
    s = str(op).strip()
    for pre in ("torch.ops.aten.", "aten::", "aten."):
        if s.startswith(pre):
            s = s[len(pre):]
            break
    if s.endswith(".default"):
        s = s[: -len(".default")]
    return s


def provenance_text(rel: Release) -> str:
    """One-line citation of a release table."""
    bits = []
    for p in rel.meta.get("provenance", []):
        s = f"{p.get('package')} {p.get('version') or ''} {p.get('file', '')}".replace("  ", " ")
        if p.get("commit"):
            s += f" @{p['commit'][:12]}"
        if p.get("licence"):
            s += f" ({p['licence']})"
        bits.append(s)
    return "; ".join(bits)


def short_provenance(rel: Release) -> str:
    """Compact citation: wheel yaml @commit + torch native_functions.yaml (licences)."""
    p = rel.meta.get("provenance", [])
    npu = next((x for x in p if x.get("package") == "torch-npu"), {})
    tor = next((x for x in p if x.get("package") == "torch"), {})
    s = f"torch-npu {npu.get('version', rel.torch_npu)} wheel npu_native_functions_by_codegen.yaml"
    if npu.get("commit"):
        s += f" (Ascend/pytorch @{npu['commit'][:12]})"
    if tor:
        s += f" + torch {tor.get('version', '')} native_functions.yaml"
    return s + " [BSD-3-Clause]"


def op_support(op: str, torch_npu: Optional[str] = None) -> "dict[str, Any]":
    """How aten overload ``op`` runs under torch_npu release ``torch_npu``.

    ``op``: ``"aten::linalg_inv_ex"``, ``"nanmean.out"``, ``"aten.bmm.default"``.
    ``torch_npu``: a release (nearest known one used, see :func:`resolve_release`).
    Returns a dict: ``overload``, ``torch_npu`` (release used), ``requested``,
    ``torch``, ``class`` (one of :data:`CLASS_LABELS`; ``"unknown"`` if the
    overload is not in the table), ``label``, ``npu_impl`` (e.g.
    ``"acl_op+op_api"``, ``"via_out:op_api"``, ``""``), ``impl_paths`` (list),
    ``torch_dispatch``, ``cpu_fallback`` (bool), ``warning`` (str or None) and
    ``source`` (provenance of the table; for CPU fallback also the fallback
    mechanism).  Raises ``ValueError`` for a malformed version.
    """
    release, warning = resolve_release(torch_npu)
    rel = load_release(release)
    name = normalize_op(op)
    row = rel.ops.get(name)
    cls, impl, disp = row if row else ("unknown", "", "")
    paths = [p for p in impl.replace("via_out:", "").split("+") if p] if impl else []
    src = provenance_text(rel)
    if cls == "cpu_fallback":
        src = src + "; " + FALLBACK_SOURCE
    return {
        "overload": name,
        "torch_npu": release,
        "requested": torch_npu,
        "torch": rel.torch,
        "class": cls,
        "label": CLASS_LABELS.get(cls, cls),
        "npu_impl": impl,
        "impl_paths": paths,
        "torch_dispatch": disp,
        "cpu_fallback": cls == "cpu_fallback",
        "warning": warning,
        "source": src,
    }
