"""Ascend chips: soc_version string → family and capabilities.

Data: ``kb/data/chips.json``, built by ``tools/kb_versions.py`` from
``reference/data/derived/soc_versions.json`` (torch_npu ``NpuVariables.{h,cpp}``
@ 9e73e708ab9350d203475609f36f8a43f6a0c2ab, the RecSDK SoC family map, CANN ATC
``--soc_version`` docs; see ``_provenance`` inside the file).

Families: ``"910"`` (1st gen, incl. the digit-less ``Ascend910B``), ``"910B"``
(Atlas A2, ``Ascend910B1``…), ``"910C"`` (Atlas A3, ``Ascend910_93xx``),
``"950"``, ``"310P"``, ``"310B"``, ``"310"`` (legacy, not supported by torch_npu).

``bf16`` is ``True``/``False`` where the sources agree and ``None`` (unknown)
otherwise (310B: the hand-assembled table says no, torch_npu's
``IsBF16Supported()`` enum ordering says yes; legacy 310: no data).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Dict, List, Optional, Tuple

_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "chips.json")

#: Spellings a user may pass for a family (``--chip a3``) → family code.
FAMILY_ALIASES = {
    "910": "910", "910a": "910", "ascend910a": "910", "910pro": "910", "910 pro": "910",
    "910b": "910B", "a2": "910B", "atlas a2": "910B", "ascend910b-a2": "910B",
    "910c": "910C", "a3": "910C", "atlas a3": "910C", "910_93": "910C", "ascend910_93": "910C",
    "950": "950", "ascend950": "950",
    "310p": "310P", "ascend310p": "310P",
    "310b": "310B", "ascend310b": "310B",
    "310": "310",
}


@dataclass(frozen=True)
class ChipInfo:
    """What the KB knows about one soc_version.

    ``soc_version``: canonical string as torch_npu / ATC spell it (``"Ascend910B3"``).
    ``family``: ``"910" | "910B" | "910C" | "950" | "310P" | "310B" | "310"``.
    ``bf16``: ``True`` / ``False`` / ``None`` (unknown — sources disagree or missing).
    ``kernels_package``: chip token in CANN kernel/ops package names (``"910b"``), or None.
    ``source``: where the facts come from (file + upstream).
    """

    soc_version: str
    family: str
    family_name: str
    series: Optional[str]
    products: Tuple[str, ...]
    bf16: Optional[bool]
    bf16_note: Optional[str]
    aclnn_only: bool
    default_jit_compile: Optional[bool]
    kernels_package: Optional[str]
    torch_npu_supported: bool
    note: Optional[str]
    source: str = field(compare=False)


@lru_cache(maxsize=1)
def _table() -> dict:
    with open(_DATA, encoding="utf-8") as fh:
        return json.load(fh)


def _source() -> str:
    prov = _table().get("_provenance", {})
    ups = []
    for inp in prov.get("inputs", []):
        ups.extend(inp.get("upstream") or [])
    first = ups[0] if ups else "reference soc_versions.json"
    return f"ascendify/kb/data/chips.json ← reference/data/derived/soc_versions.json ({first})"


def _make(soc_version: str, family: str) -> ChipInfo:
    fam = _table()["families"][family]
    return ChipInfo(
        soc_version=soc_version,
        family=family,
        family_name=fam.get("name") or family,
        series=fam.get("series"),
        products=tuple(fam.get("products") or ()),
        bf16=fam.get("bf16"),
        bf16_note=fam.get("bf16_note"),
        aclnn_only=bool(fam.get("aclnn_only")),
        default_jit_compile=fam.get("default_jit_compile"),
        kernels_package=fam.get("kernels_package") if family != "910C" else "A3",
        torch_npu_supported=bool(fam.get("torch_npu_supported")),
        note=fam.get("note"),
        source=_source(),
    )


def normalize_soc_version(text: str) -> Optional[str]:
    """Canonical soc_version for a user or ``npu-smi`` spelling, or None if unknown.

    Accepts ``"Ascend910B3"``, ``"ascend910b3"``, ``"910B3"`` (``npu-smi info`` Name
    column; soc_version = ``"Ascend" + Name`` per the CANN ATC docs), ``"Ascend910_9392"``,
    ``"Ascend950PR_xxxx"`` (any ``Ascend950*`` maps to the 950 family, as in torch_npu).
    """
    if not text:
        return None
    t = str(text).strip()
    if not t:
        return None
    table = _table()["soc_versions"]
    lower = {k.lower(): k for k in table}
    cand = t.lower().replace(" ", "")
    for c in (cand, "ascend" + cand):
        if c in lower:
            return lower[c]
    for prefix in _table().get("prefix_families", {}):
        p = prefix.lower()
        for c in (cand, "ascend" + cand):
            if c.startswith(p):
                orig = t.replace(" ", "")
                if not orig.lower().startswith("ascend"):
                    orig = "Ascend" + orig
                return prefix + orig[len(prefix):]
    return None


def chip_info(soc_version: str) -> Optional[ChipInfo]:
    """Return the :class:`ChipInfo` for a soc_version (any spelling accepted by
    :func:`normalize_soc_version`), or ``None`` if the KB does not know it.

    >>> chip_info("Ascend910B3").family, chip_info("910B3").bf16
    ('910B', True)
    """
    canon = normalize_soc_version(soc_version)
    if canon is None:
        return None
    fam = _table()["soc_versions"].get(canon, {}).get("family")
    if fam is None:
        for prefix, f in _table().get("prefix_families", {}).items():
            if canon.lower().startswith(prefix.lower()):
                fam = f
                break
    if fam is None:
        return None
    return _make(canon, fam)


def all_chips() -> List[ChipInfo]:
    """Every soc_version the KB knows, in table order (families 910, 910B, 910C, 950, 310P, 310B, 310)."""
    table = _table()["soc_versions"]
    order = _table().get("soc_version_order") or list(table)
    return [_make(sv, table[sv]["family"]) for sv in order]


def families() -> Dict[str, dict]:
    """Family code → raw family record (name, series, products, bf16, kernels_package …)."""
    return dict(_table()["families"])


def family_code(text: str) -> Optional[str]:
    """Family code for a family spelling (``"a3"`` → ``"910C"``, ``"910b"`` → ``"910B"``)
    or for any soc_version (``"Ascend310P3"`` → ``"310P"``); None if unknown."""
    if not text:
        return None
    t = str(text).strip().lower()
    if t in FAMILY_ALIASES:
        return FAMILY_ALIASES[t]
    info = chip_info(text)
    if info:
        return info.family
    if t.startswith("ascend") and t[6:] in FAMILY_ALIASES:
        return FAMILY_ALIASES[t[6:]]
    return None


def family_chips(family: str) -> List[ChipInfo]:
    """All soc_versions of one family code (``"910B"``) or alias (``"a2"``)."""
    code = family_code(family) or family
    return [c for c in all_chips() if c.family == code]


# --------------------------------------------------------------------------- device memory
#
# Data: ``kb/data/chip_memory.toml`` (hand-assembled, one public source URL per number;
# see the header of that file).  Units: bytes in the API, MiB in the file.

_MEMORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "chip_memory.toml")
_MIB = 1 << 20


@lru_cache(maxsize=1)
def _memory() -> dict:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    with open(_MEMORY, "rb") as fh:
        return tomllib.load(fh)


def _memory_record(soc: str) -> Optional[dict]:
    canon = normalize_soc_version(soc)
    if canon is None:
        return None
    table = _memory().get("soc", {})
    if canon in table:
        return table[canon]
    # prefix families (any "Ascend950*" is a 950): "Ascend950PR_9582" -> "Ascend950PR"
    low = canon.lower()
    keys = [k for k in table if low.startswith(k.lower())]
    return table[max(keys, key=len)] if keys else None


def hbm_bytes(soc: str) -> Optional[int]:
    """Device memory in bytes of one torch_npu device of ``soc``, or None if unknown.

    ``soc``: any spelling :func:`chip_info` accepts (``"910B3"``, ``"Ascend910_9392"``).
    For Atlas A3 (``Ascend910_93xx``) one device is **one die** (64 GiB); the card
    holds two (see :func:`card_hbm_bytes`).  A number can be unverified (family
    value or announcement): check :func:`hbm_verified`.  Source: :func:`hbm_source`.

    >>> hbm_bytes("910B3") // 2**30, hbm_bytes("Ascend910_9392") // 2**30
    (64, 64)
    """
    rec = _memory_record(soc)
    if rec is None or rec.get("mib") is None:
        return None
    return int(rec["mib"]) * _MIB


def card_hbm_bytes(soc: str) -> Optional[int]:
    """Memory of the whole card/module in bytes (A3: two dies, 128 GiB); equals
    :func:`hbm_bytes` for one-device cards; None if unknown."""
    rec = _memory_record(soc)
    if rec is None:
        return None
    if rec.get("card_mib") is not None:
        return int(rec["card_mib"]) * _MIB
    return hbm_bytes(soc)


def hbm_verified(soc: str) -> bool:
    """True when a public source states :func:`hbm_bytes` for exactly this soc_version."""
    rec = _memory_record(soc)
    return bool(rec and rec.get("verified") and rec.get("mib") is not None)


def hbm_source(soc: str) -> str:
    """Where :func:`hbm_bytes` comes from: the source URLs (space-separated), then
    ``"(unverified: <reason>)"`` when unverified; for an unknown size the reason only.
    ``""`` for a soc_version the KB does not know."""
    rec = _memory_record(soc)
    if rec is None:
        return ""
    urls = " ".join(rec.get("sources") or [])
    if rec.get("verified") and rec.get("mib") is not None:
        return urls
    reason = rec.get("reason") or "unverified"
    return f"{urls} (unverified: {reason})".strip() if urls else f"unknown: {reason}"


def memory_table() -> List[dict]:
    """One dict per soc_version in KB order: ``soc_version``, ``family``, ``hbm_bytes``
    (None if unknown), ``card_bytes``, ``dies_per_card``, ``allocatable_bytes``
    (None unless a source gives it), ``memory`` (technology), ``verified``,
    ``sources`` (URL list), ``reason``, ``note``."""
    out = []
    for info in all_chips():
        rec = _memory().get("soc", {}).get(info.soc_version, {})
        mib = rec.get("mib")
        out.append({
            "soc_version": info.soc_version,
            "family": info.family,
            "hbm_bytes": int(mib) * _MIB if mib is not None else None,
            "card_bytes": card_hbm_bytes(info.soc_version),
            "dies_per_card": int(rec.get("dies_per_card", 1)),
            "allocatable_bytes": int(rec["allocatable_mib"]) * _MIB if rec.get("allocatable_mib") else None,
            "memory": rec.get("memory"),
            "verified": bool(rec.get("verified")) and mib is not None,
            "sources": list(rec.get("sources") or []),
            "reason": rec.get("reason"),
            "note": rec.get("note"),
        })
    return out


def _gib(nbytes: Optional[int]) -> str:
    if nbytes is None:
        return "—"
    g = nbytes / 2**30
    return f"{g:g} GiB"


def memory_table_markdown() -> str:
    """The chip-memory table of ``docs/chips.md`` (Markdown), generated from
    ``chip_memory.toml``; ``tools/chip_memory_doc.py`` writes it into the doc."""
    rows = ["| soc_version | family | per device | per card | memory | verified | sources / reason |",
            "|---|---|---:|---:|---|---|---|"]
    for r in memory_table():
        links = " ".join(f"[{i + 1}]({u})" for i, u in enumerate(r["sources"]))
        why = r["reason"] or ""
        cell = (links + (" — " + why if why else "")).strip() or "—"
        card = _gib(r["card_bytes"]) if r["dies_per_card"] > 1 else ""
        rows.append(f"| {r['soc_version']} | {r['family']} | {_gib(r['hbm_bytes'])} | {card} | "
                    f"{r['memory'] or ''} | {'yes' if r['verified'] else 'no'} | {cell.replace('|', '/')} |")
    return "\n".join(rows) + "\n"
