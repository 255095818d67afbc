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
