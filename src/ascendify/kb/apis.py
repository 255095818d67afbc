"""Native-API support notes, API → aten mapping, deprecated ``npu_*`` APIs, recipes.

Data:

* ``kb/data/apis.json.gz`` — torch_npu "PyTorch native API support list"
  (Ascend/pytorch docs; commit per list in ``sources``), per torch version:
  supported, verified dtypes, "may fall back to CPU", per-product ✔/✘;
  plus ``aten``: the aten overloads each public API reached when PyTorch's
  OpInfo samples ran on the CPU under a TorchDispatchMode (torch version in
  ``aten_source``).
* ``kb/data/deprecated.json`` — op-plugin ``deprecated.yaml`` per branch.
* ``kb/data/curated.toml`` — replacement recipes with their sources.

Semantics (reference/op-support-and-versions.md §1.4): the dtype lists are
"verified dtypes", not hard kernel limits; an API absent from a list is "not
verified", never "unsupported".
"""

from __future__ import annotations

import gzip
import json
import os
import re
import sys
from typing import Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ascendify.kb import DATA_DIR

_C: dict = {}

#: chip family (kb.chips) → hardware column of the newer doc layout
FAMILY_HARDWARE = {"910B": "A2", "910C": "A3", "950": "950DT"}

ALIASES = {
    "F.": "torch.nn.functional.",
    "nn.functional.": "torch.nn.functional.",
    "functional.": "torch.nn.functional.",
    "nn.": "torch.nn.",
    "linalg.": "torch.linalg.",
    "fft.": "torch.fft.",
    "special.": "torch.special.",
    "torch.Tensor.": "Tensor.",
    "tensor.": "Tensor.",
    "x.": "Tensor.",
}


def _notes() -> dict:
    if "notes" not in _C:
        with gzip.open(os.path.join(DATA_DIR, "apis.json.gz"), "rb") as fh:
            _C["notes"] = json.loads(fh.read().decode("utf-8"))
    return _C["notes"]


def deprecated_table() -> dict:
    if "dep" not in _C:
        with open(os.path.join(DATA_DIR, "deprecated.json"), encoding="utf-8") as fh:
            _C["dep"] = json.load(fh)
    return _C["dep"]


def recipes() -> list:
    if "recipes" not in _C:
        with open(os.path.join(DATA_DIR, "curated.toml"), "rb") as fh:
            _C["recipes"] = tomllib.load(fh).get("recipe", [])
    return _C["recipes"]


def normalize_api(name: str) -> str:
    """``F.interpolate`` → ``torch.nn.functional.interpolate``; ``torch.Tensor.x`` → ``Tensor.x``."""
    s = str(name).strip()
    for pre, full in ALIASES.items():
        if s.startswith(pre):
            return full + s[len(pre):]
    return s


def known_api(name: str) -> bool:
    n = normalize_api(name)
    d = _notes()
    return n in d["apis"] or n in d.get("aten", {})


def api_candidates(bare: str) -> "list[str]":
    """Public API names for a bare name: ``nanmean`` → ``torch.nanmean``, ``Tensor.nanmean``."""
    d = _notes()
    out = []
    for pre in ("torch.", "Tensor.", "torch.nn.functional.", "torch.linalg.", "torch.special.", "torch.fft.", "torch.nn."):
        n = pre + bare
        if n in d["apis"] or n in d.get("aten", {}):
            out.append(n)
    return out


def doc_for_torch(torch_version: str) -> "tuple[list[str], Optional[str]]":
    """Doc-list ids for a torch version (``"2.7.1"`` → ``["2.7.1", "2.7.1-cards"]``) and a
    note when the KB has no list for it (then the nearest list is used)."""
    d = _notes()
    base = ".".join(str(torch_version).split(".")[:3])
    ids = [x for x in d["docs"] if x.split("-")[0] == base]
    if ids:
        return ids, None
    key = lambda v: tuple(int(p) for p in re.findall(r"\d+", v.split("-")[0])[:3])  # noqa: E731
    tv = key(base)
    best = min(d["docs"], key=lambda x: (abs(key(x)[1] - tv[1]), key(x)))
    return [best], (f"no native-API support list for torch {base} in the KB "
                    f"(torch 2.1–2.5 lists exist only as hiascend.com HTML); showing the torch {best.split('-')[0]} list")


def api_notes(api: str, torch_version: str) -> "list[dict]":
    """Doc entries for ``api`` under ``torch_version`` (one per list; may be empty = not verified)."""
    d = _notes()
    name = normalize_api(api)
    ids, note = doc_for_torch(torch_version)
    out = []
    ent = d["apis"].get(name, {})
    for did in ids:
        src = d["sources"][did]
        row = ent.get(did)
        if row is None:
            out.append({"api": name, "doc": did, "listed": False, "nearest_note": note,
                        "source": _cite(src), "text": "not in this list (= not verified by the docs, not 'unsupported')"})
            continue
        sup, dts, fb, ni, hw = row
        en = d.get("en_notes", {}).get(name)
        out.append({
            "api": name, "doc": did, "listed": True, "nearest_note": note,
            "supported": bool(sup), "dtypes": [x for x in dts.split(",") if x],
            "may_fallback_cpu": bool(fb), "note": d["strings"][ni],
            "note_en": d["strings"][en] if en is not None else None,
            "hardware": {k: v == "1" for k, v in (p.split(":") for p in hw.split(",") if p)},
            "source": _cite(src),
        })
    return out


def _cite(src: dict) -> str:
    return (f"{src.get('repo', 'Ascend/pytorch')} {src.get('path', '')} @{str(src.get('commit', ''))[:12]} "
            f"({src.get('licence', '')})").strip()


def aten_for_api(api: str) -> "tuple[list[str], str]":
    """aten overloads an API reaches (traced), else a name-based guess; plus how it was found."""
    d = _notes()
    name = normalize_api(api)
    traced = d.get("aten", {}).get(name)
    if traced:
        src = d.get("aten_source", {})
        return list(traced), f"traced: {src.get('method', '')} (torch {src.get('torch', '?')})"
    return [name_based_aten(name)], "name-based guess (API not in the traced set)"


def name_based_aten(api: str) -> str:
    """``torch.linalg.inv`` → ``linalg_inv``; ``Tensor.scatter_add_`` → ``scatter_add_``;
    ``torch.nn.functional.instance_norm`` → ``instance_norm``."""
    name = normalize_api(api)
    last = name.split(".")[-1]
    for pre, p in (("torch.linalg.", "linalg_"), ("torch.special.", "special_"), ("torch.fft.", "fft_")):
        if name.startswith(pre):
            return p + last
    return last


def deprecated(name: str) -> Optional[dict]:
    """Deprecation entry of ``npu_*`` op ``name`` (``torch_npu.npu_conv2d`` / ``npu_conv2d.out``)."""
    n = str(name).split("torch_npu.")[-1].split("torch.ops.npu.")[-1]
    table = deprecated_table()
    ent = table["deprecated"].get(n)
    if ent is None:
        return None
    out = dict(ent)
    out["name"] = n
    br = table["source"]["branches"]
    last = ent["branches"][-1] if ent["branches"] else ""
    out["source"] = (f"Ascend/op-plugin op_plugin/config/deprecated.yaml (branches {', '.join(ent['branches'])}; "
                     f"{last} @{br.get(last, {}).get('commit', '')[:12]}) (BSD-3-Clause)")
    return out


def recipes_for(aten_names: "list[str]" = (), apis: "list[str]" = ()) -> "list[dict]":
    """Curated recipes matching aten base names (overloads stripped) or API names."""
    bases = {normalize_base(a) for a in aten_names}
    names = {normalize_api(a) for a in apis}
    out = []
    for r in recipes():
        if bases & set(r.get("aten", [])) or names & set(r.get("apis", [])):
            out.append(r)
    return out


def normalize_base(op: str) -> str:
    s = str(op)
    for pre in ("aten::", "aten.", "torch.ops.aten."):
        if s.startswith(pre):
            s = s[len(pre):]
    return s.split(".")[0]
