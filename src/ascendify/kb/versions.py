"""torch ↔ torch_npu ↔ CANN ↔ Python ↔ driver compatibility.

Data: ``kb/data/versions.json``, built by ``tools/kb_versions.py`` from
``reference/data/derived/version_matrix.json`` (Ascend/pytorch
``COMPATIBILITY.en.md`` @ 9e73e708ab9350d203475609f36f8a43f6a0c2ab) and
``cann_hdk_recommended.json`` (Ascend/docs ``_static/package_info.js`` install-guide
data + the vllm-ascend validated stack).  Inner-version codes (``V100R001C23``)
are observed samples (op-support-and-versions.md §5.2), marked unverified.

Version strings: CANN ``8.0.RC3``, ``8.0.0``, ``8.0.T6``, ``8.0.RC2.alpha002``,
``9.2.0-beta.2``; torch_npu ``2.7.1.post4``, ``2.1.0.rc1``; torch ``2.7.1+cpu``.
Unknown versions fall back to the nearest known row; every answer says so.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, List, Optional, Tuple

_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "versions.json")

SOURCE_MATRIX = "Ascend/pytorch COMPATIBILITY.en.md @ 9e73e708 (via reference/data/derived/version_matrix.json)"
SOURCE_HDK = "Ascend/docs _static/package_info.js install-guide pairs (via reference/data/derived/cann_hdk_recommended.json)"


@dataclass(frozen=True)
class Release:
    """One row of the torch_npu compatibility table.

    ``torch_npu`` / ``torch`` / ``cann``: version strings as published;
    ``branch``: Ascend/pytorch branch (``v2.7.1-7.2.0``); ``extension_release``:
    Ascend Extension for PyTorch release (``7.2.0``), also the op-plugin branch.
    """

    torch_npu: str
    torch: str
    cann: str
    branch: str
    extension_release: str
    label: Optional[str] = None


@dataclass(frozen=True)
class Lookup:
    """Result of a lookup with nearest-row fallback.

    ``release``: the row used (None if nothing close); ``exact``: the installed
    version is itself a row; ``note``: one sentence explaining a fallback.
    """

    release: Optional[Release]
    exact: bool
    note: Optional[str] = None


@lru_cache(maxsize=1)
def _table() -> dict:
    with open(_DATA, encoding="utf-8") as fh:
        return json.load(fh)


# ----------------------------------------------------------------------------- parsing

_CANN_RE = re.compile(
    r"^\s*(\d+)\.(\d+)(?:\.(?:(RC|T)(\d+)|(\d+)))?((?:\.\d+)*)(?:[.\-_]?(alpha|beta|b|a)\.?(\d+))?\s*$",
    re.IGNORECASE,
)


def cann_key(version: str) -> Optional[Tuple[int, ...]]:
    """Sort key for a CANN version, or None if it does not parse.

    Order within one ``major.minor``: ``T<n>`` < ``RC<n>`` < ``<n>`` (final), alpha/beta
    pre-releases before their release: ``8.0.RC2.alpha002`` < ``8.0.RC2`` < ``8.0.RC3`` < ``8.0.0``
    < ``8.1.RC1``; ``6.3.RC3.1`` > ``6.3.RC3``; ``9.2.0-beta.2`` < ``9.2.0``.
    """
    if version is None:
        return None
    m = _CANN_RE.match(str(version))
    if not m:
        return None
    major, minor, kind, knum, final, extra, pre, prenum = m.groups()
    if kind:
        stage = 0 if kind.upper() == "T" else 1
        num = int(knum)
    elif final is not None:
        stage, num = 2, int(final)
    else:
        stage, num = 2, 0
    extras = tuple(int(x) for x in extra.split(".") if x) if extra else ()
    pre_key = (0, int(prenum or 0)) if pre else (1, 0)
    return (int(major), int(minor), stage, num) + pre_key + extras


def normalize_cann(version: str) -> Optional[str]:
    """``"8.2.rc1"`` → ``"8.2.RC1"``; None if it does not parse."""
    if cann_key(version) is None:
        return None
    v = str(version).strip()
    return re.sub(r"(?i)\.(rc|t)(\d+)", lambda m: "." + m.group(1).upper() + m.group(2), v)


def cann_release_of(version: str) -> Optional[str]:
    """The release a CANN version belongs to, dropping build/pre-release suffixes:
    ``8.0.RC2.alpha002`` → ``8.0.RC2``, ``9.2.0-beta.2`` → ``9.2.0``; None if unparsable."""
    m = _CANN_RE.match(str(version or ""))
    if not m:
        return None
    major, minor, kind, knum, final, _extra, _pre, _n = m.groups()
    if kind:
        return f"{major}.{minor}.{kind.upper()}{knum}"
    return f"{major}.{minor}.{final or 0}"


_PEP440 = re.compile(r"^\s*v?(\d+(?:\.\d+)*)(?:\.?(rc|a|b)(\d+))?(?:\.post(\d+))?(?:\.dev\d+)?(?:\+[\w.]+)?\s*$",
                     re.IGNORECASE)


def pep440_key(version: str) -> Optional[Tuple]:
    """Sort key for torch / torch_npu / Python versions (``2.7.1.post4``, ``2.1.0.rc1``,
    ``2.7.1+cpu``); None if it does not parse."""
    m = _PEP440.match(str(version or ""))
    if not m:
        return None
    nums, pre, pren, post = m.groups()
    base = tuple(int(x) for x in nums.split("."))
    base = base + (0,) * (3 - len(base)) if len(base) < 3 else base
    pre_key = (0, pre.lower(), int(pren)) if pre else (1, "", 0)
    return (base, pre_key, int(post or 0))


def base_version(version: str) -> Optional[str]:
    """``"2.7.1.post4"`` → ``"2.7.1"``; ``"2.7.1+cpu"`` → ``"2.7.1"``; None if unparsable."""
    k = pep440_key(version)
    return ".".join(str(x) for x in k[0]) if k else None


# ----------------------------------------------------------------------------- queries

def releases() -> List[Release]:
    """All rows, newest extension release first (table order)."""
    return [Release(r["torch_npu"], r["torch"], r["cann"], r.get("branch", ""),
                    r.get("extension_release", ""), r.get("label")) for r in _table()["releases"]]


def known_cann_versions() -> List[str]:
    """Every CANN release the matrix or the HDK table names, oldest first."""
    vals = {r.cann for r in releases()} | set(_table()["cann_hdk"]["rows"])
    return sorted((v for v in vals if cann_key(v)), key=cann_key)


def releases_matching(torch_npu: Optional[str] = None, torch: Optional[str] = None,
                      cann: Optional[str] = None, python: Optional[str] = None) -> List[Release]:
    """Rows that match every given constraint exactly (torch compared on the base
    version, so ``2.7.1+cpu`` matches ``2.7.1``; CANN compared on its release, so
    ``8.0.RC2.alpha002`` matches ``8.0.RC2``; python as ``"3.11"``).

    >>> [r.torch_npu for r in releases_matching(cann="8.2.RC1")]
    ['2.6.0', '2.5.1.post1', '2.1.0.post13']
    """
    out = []
    want_cann = cann_key(cann_release_of(cann)) if cann else None
    want_torch = base_version(torch) if torch else None
    want_npu = pep440_key(torch_npu) if torch_npu else None
    py = ".".join(str(python).split(".")[:2]) if python else None
    for r in releases():
        if want_npu is not None and pep440_key(r.torch_npu) != want_npu:
            continue
        if want_torch is not None and base_version(r.torch) != want_torch:
            continue
        if want_cann is not None and cann_key(r.cann) != want_cann:
            continue
        if py is not None and py not in python_versions(r.torch):
            continue
        out.append(r)
    return out


def lookup_torch_npu(version: str) -> Lookup:
    """The row for an installed torch_npu, falling back to the nearest known row of
    the same ``major.minor.patch`` (largest post ≤ installed, else the smallest above).

    PyPI posts newer than the table (2.7.1.post11, 2.9.0.post9 …) are not mapped to
    a CANN by the source; the fallback says so in ``note``.
    """
    key = pep440_key(version)
    if key is None:
        return Lookup(None, False, f"torch_npu version '{version}' does not parse")
    exact = [r for r in releases() if pep440_key(r.torch_npu) == key]
    if exact:
        return Lookup(exact[0], True)
    same = sorted((r for r in releases() if (pep440_key(r.torch_npu) or ((),))[0] == key[0]),
                  key=lambda r: pep440_key(r.torch_npu))
    if not same:
        newest = max(releases(), key=lambda r: pep440_key(r.torch_npu) or ((0,),))
        if key > pep440_key(newest.torch_npu):
            return Lookup(None, False, f"torch_npu {version} is newer than the knowledge base "
                                       f"(newest row: {newest.torch_npu} for CANN {newest.cann})")
        return Lookup(None, False, f"torch_npu {version} is not in the compatibility table")
    below = [r for r in same if pep440_key(r.torch_npu) <= key]
    row = below[-1] if below else same[0]
    where = "newer than the published" if below and row is same[-1] else "not a published"
    return Lookup(row, False, f"torch_npu {version} is not in the compatibility table ({where} "
                              f"{base_version(version)} rows); nearest known row: {row.torch_npu} "
                              f"for CANN {row.cann}")


def lookup_cann(version: str) -> Lookup:
    """Is this CANN release in the matrix?  ``release`` is one row for the CANN
    used (exact, else the nearest older known CANN; else the oldest known)."""
    rel = cann_release_of(version)
    if rel is None:
        return Lookup(None, False, f"CANN version '{version}' does not parse")
    rows = releases_matching(cann=rel)
    if rows:
        return Lookup(rows[0], True)
    key = cann_key(rel)
    known = sorted({r.cann for r in releases()}, key=cann_key)
    older = [c for c in known if cann_key(c) < key]
    nearest = older[-1] if older else known[0]
    newest = known[-1]
    if key > cann_key(newest):
        note = f"CANN {version} is newer than the knowledge base (newest: {newest}); using the {newest} rows"
    else:
        note = f"CANN {version} is not in the compatibility table; nearest known: {nearest}"
    return Lookup(releases_matching(cann=nearest)[0], False, note)


def python_versions(torch: str) -> List[str]:
    """Python ``major.minor`` versions the torch release supports (source table),
    exact base version first, else the nearest lower ``major.minor`` row; [] if unknown."""
    table = _table()["python_by_torch"]
    b = base_version(torch)
    if b is None:
        return []
    if b in table:
        return list(table[b])
    mm = tuple(int(x) for x in b.split(".")[:2])
    cands = sorted((k for k in table if tuple(int(x) for x in k.split(".")[:2]) == mm), key=pep440_key)
    return list(table[cands[-1]]) if cands else []


def hdk_recommended(cann: str, family: Optional[str] = None) -> Optional[Dict[str, str]]:
    """Driver / firmware the install guide pairs with a CANN release, for a chip
    family (``"910B"``, ``"310P"``; others fall back to the ``910b`` column), e.g.
    ``{"driver": "25.0.rc1.1", "firmware": "7.7.0.1.231"}`` or ``{"hdk": "26.0.RC1"}``.
    These are tested pairs, not the full range.  None if the table has no row."""
    rows = _table()["cann_hdk"]["rows"]
    rel = cann_release_of(cann)
    row = rows.get(str(cann)) or (rows.get(rel) if rel else None)
    if row is None:
        return None
    col = {"310P": "310p"}.get(family or "", "910b")
    return dict(row.get(col) or row.get("any") or row.get("910b") or next(iter(row.values())))


def inner_code(innerversion: str) -> Optional[str]:
    """``"V100R001C23SPC002B212"`` → ``"C23"``; None if absent."""
    m = re.search(r"V\d+R\d+(C\d+)", str(innerversion or ""))
    return m.group(1) if m else None


def releases_for_inner_code(kind: str, code: str) -> List[str]:
    """Releases observed with an inner-version code (``kind`` ``"cann"`` or ``"driver"``);
    unverified mapping (§5.2 samples)."""
    return list(_table()["inner_version_codes"].get(kind, {}).get(code, []))


def recommended() -> Dict[str, object]:
    """The source's recommended combination (torch_npu, torch, cann, python list)."""
    return dict(_table()["recommended"])


def provenance() -> dict:
    """The ``_provenance`` block of versions.json (inputs with sha256 and upstream)."""
    return dict(_table()["_provenance"])


def suggest_for_mismatch(torch_npu: str, cann: str, torch: Optional[str] = None) -> Tuple[Optional[str], List[str]]:
    """For an installed torch_npu + CANN pair, return ``(needed_cann, torch_npu_options)``:
    the CANN the torch_npu row needs (None if unknown) and torch_npu versions made
    for the installed CANN (same torch first, then newest).  Used for messages like
    "torch_npu 2.7.1.post4 needs CANN 9.0.0; installed 8.2.RC1 — install torch_npu 2.6.0 or CANN 9.0.0".
    """
    look = lookup_torch_npu(torch_npu)
    needed = look.release.cann if look.release else None
    rows = releases_matching(cann=cann)
    b = base_version(torch) if torch else base_version(torch_npu)
    same = [r.torch_npu for r in rows if base_version(r.torch) == b]
    other = [r.torch_npu for r in rows if base_version(r.torch) != b]
    return needed, same + other


def pypi_builds_not_in_table() -> List[str]:
    """torch_npu versions published on PyPI that the compatibility table does not
    map to a CANN release (later posts, early builds from master)."""
    return list(_table().get("pypi_builds_not_in_table", {}).get("torch_npu", []))


def torch_npu_for_torch(torch: str) -> Tuple[List[Release], List[str]]:
    """``(rows, other_builds)`` for a torch version: table rows whose torch matches
    the base version (newest CANN first), and PyPI torch_npu builds for that torch
    that the table does not map to a CANN."""
    b = base_version(torch)
    rows = [r for r in releases() if base_version(r.torch) == b] if b else []
    others = [v for v in pypi_builds_not_in_table() if base_version(v) == b]
    return rows, sorted(others, key=pep440_key)


def _vkey(v: str) -> tuple:
    k = pep440_key(v)
    return k if k is not None else ((0,), (1, "", 0), 0)


def spec_matches(version: str, spec: str) -> Optional[bool]:
    """Does ``version`` satisfy a PEP 440 specifier set (``==2.7.1.*``, ``>=2.1,<2.2``)?
    None if the specifier cannot be read."""
    ok = True
    for part in [p.strip() for p in (spec or "").split(",") if p.strip()]:
        m = re.match(r"^(===|==|!=|~=|>=|<=|>|<)\s*([\w.*+!]+)$", part)
        if not m:
            return None
        op, want = m.groups()
        if want.endswith(".*"):
            prefix = want[:-2]
            have = (base_version(version) or version).split(".")
            pre = prefix.split(".")
            match = have[:len(pre)] == pre
            res = match if op == "==" else (not match if op == "!=" else None)
            if res is None:
                return None
            ok = ok and res
            continue
        a, b = _vkey(version), _vkey(want)
        if op in ("==", "==="):
            res = a == b or (base_version(version) == want and "+" in version)
        elif op == "!=":
            res = a != b
        elif op == ">=":
            res = a >= b
        elif op == "<=":
            res = a <= b
        elif op == ">":
            res = a > b
        elif op == "<":
            res = a < b
        else:  # ~=
            w = want.split(".")
            res = a >= b and (base_version(version) or "").split(".")[:len(w) - 1] == w[:-1]
        ok = ok and res
    return ok
