"""AI_CPU placement rules: why a CANN op with given dtypes runs on AI_CPU.

AI Core vs AI CPU is decided inside CANN per op type and dtype; no torch-side
file lists it.  This module uses the usable public proxies (see
reference/op-support-and-versions.md §2.2):

* mstt msprof-analyze advisor ``aicpu_rules.yaml`` (Apache-2.0): per CANN
  version the dtypes that stay on AI Core, generic and per op type;
* the ``running on AiCpu`` warnings compiled into ``libtorch_npu.so``
  (e.g. ArgSort with int32/int64);
* curated op-plugin code facts (``kb/data/curated.toml``, marked unverified).

Data: ``kb/data/aicpu_rules.json`` built by ``tools/build_kb.py``.
"""

from __future__ import annotations

import json
import os
import re
from typing import Iterable, Optional

from ascendify.kb import DATA_DIR
from ascendify.kb.dtypes import split_dtypes

_CACHE: dict = {}


def _load() -> dict:
    if "doc" not in _CACHE:
        with open(os.path.join(DATA_DIR, "aicpu_rules.json"), encoding="utf-8") as fh:
            _CACHE["doc"] = json.load(fh)
    return _CACHE["doc"]


def aicpu_dtype_rules() -> list:
    """All AI_CPU rules as dicts (copies).

    Keys: ``kind`` (``dtype``: dtypes that stay on AI Core per CANN version —
    any other dtype ⇒ AI_CPU; ``aicpu_dtypes``: dtypes that force AI_CPU;
    ``guide``: op types mstt has a replacement guide for), ``op_types``
    (lower-case CANN op types, ``__all__`` = every op not in ``ignore_types``),
    ``cann_versions``, ``aicore_input_dtypes`` / ``aicpu_input_dtypes``
    (canonical torch dtype names), and ``source`` (a dict: package, file,
    commit, licence).
    """
    doc = _load()
    out = []
    for r in doc["rules"]:
        d = dict(r)
        d["source"] = dict(doc["sources"].get(r["source"], {"package": r["source"]}))
        out.append(d)
    return out


def _cann_key(v: str) -> tuple:
    """Order CANN versions: 7.0.RC1 < 7.0.0 < 8.0.RC1 < 8.0.RC2 < 8.0.0 < 8.1.RC1."""
    parts = str(v).strip().upper().split(".")
    key = []
    for p in parts[:3]:
        m = re.match(r"RC(\d+)", p)
        if m:
            key.append((0, int(m.group(1))))
        elif p.isdigit():
            key.append((1, int(p)))
        else:
            key.append((0, 0))
    while len(key) < 3:
        key.append((1, 0))
    return tuple(key)


def _pick_cann(cann: Optional[str], rules: list) -> "tuple[str, list]":
    """Choose the rule set for ``cann``: exact listed version, else the newest
    set whose oldest listed version is ≤ ``cann`` (``None`` → newest set)."""
    sets: dict = {}
    for r in rules:
        if r["kind"] == "dtype":
            sets.setdefault(tuple(r["cann_versions"]), []).append(r)
    if not sets:
        return "", []
    ordered = sorted(sets, key=lambda vs: min(_cann_key(v) for v in vs))
    if cann is None:
        chosen = ordered[-1]
    else:
        chosen = next((vs for vs in ordered if cann.strip().upper() in [x.upper() for x in vs]), None)
        if chosen is None:
            k = _cann_key(cann)
            older = [vs for vs in ordered if min(_cann_key(v) for v in vs) <= k]
            chosen = older[-1] if older else ordered[0]
    return "/".join(chosen), sets[chosen]


def _cite(src: dict) -> str:
    bits = [src.get("package", "")]
    if src.get("file"):
        bits.append(src["file"])
    if src.get("commit"):
        bits.append("@" + src["commit"][:12])
    if src.get("licence"):
        bits.append("(" + src["licence"] + ")")
    return " ".join(b for b in bits if b)


def aicpu_reason(op_type: str, dtypes: Iterable[str], cann: Optional[str] = None) -> Optional[str]:
    """Explain why CANN op ``op_type`` (e.g. ``"Cast"``, ``"NonZero"``, as in the
    profiler's ``kernel_details.csv`` Type column) with input ``dtypes`` runs on
    AI_CPU, or ``None`` if no rule explains it.

    ``dtypes``: any spelling (``"FLOAT;INT64"`` cells, ``DT_BF16``,
    ``torch.float64``).  ``cann``: CANN version such as ``"8.0.RC1"``; ``None``
    uses the newest rule set; a version newer than any listed one uses the
    newest older set and the text says so.  The returned sentence names the
    source (mstt advisor rules @commit, libtorch_npu.so strings, or curated
    op-plugin facts).  Never raises on odd input.
    """
    op = str(op_type or "").strip().lower()
    if not op:
        return None
    dts = split_dtypes(dtypes)
    doc = _load()
    rules = doc["rules"]
    srcs = doc["sources"]
    reasons = []
    # 1. dtypes that force AI_CPU for this op (libtorch_npu strings, curated).
    for r in rules:
        if r["kind"] == "aicpu_dtypes" and op in r["op_types"]:
            bad = [d for d in dts if d in r["aicpu_input_dtypes"]]
            if bad:
                src = srcs.get(r["source"], {"package": r["source"]})
                note = "" if r.get("verified", True) else " [unverified]"
                reasons.append(f"{op_type} with {', '.join(sorted(set(bad)))} runs on AI_CPU: "
                               f"{r.get('message', '')} (source: {_cite(src) or r['source']}){note}")
    # 2. mstt per-CANN AI Core dtype lists.
    label, ruleset = _pick_cann(cann, rules)
    specific = [r for r in ruleset if op in r["op_types"]]
    generic = [r for r in ruleset if "__all__" in r["op_types"] and op not in r["ignore_types"]]
    for r in specific or generic:
        allowed = r["aicore_input_dtypes"]
        bad = sorted({d for d in dts if d not in allowed})
        if bad:
            which = f"'{op}'" if specific else "all op types"
            applied = ""
            if cann and cann.strip().upper() not in [v.upper() for v in r["cann_versions"]]:
                applied = f"; CANN {cann} is not listed, rules for {label} applied"
            reasons.append(
                f"{op_type} input dtype {', '.join(bad)} is not in the AI Core dtype list for {which} "
                f"under CANN {label} ({', '.join(allowed)}){applied} "
                f"(source: {_cite(srcs['mstt'])})")
    # 3. op types mstt treats as AI_CPU-prone with a replacement guide.
    if not reasons:
        for r in rules:
            if r["kind"] == "guide" and op in r["op_types"]:
                reasons.append(f"{op_type} is a known AI_CPU-prone op type: {r['suggestion']} {r.get('url', '')} "
                               f"(source: {_cite(srcs['mstt'])})".replace("  ", " "))
                break
    return "; ".join(reasons) if reasons else None
