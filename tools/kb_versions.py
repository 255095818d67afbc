"""Build ``kb/data/chips.json`` and ``kb/data/versions.json`` from the research data.

Inputs (read-only), under ``<shared>/data/derived/`` (``<shared>`` is the
``reference`` folder; CI has it at ``../shared/reference`` next to the checkout):

- ``soc_versions.json`` — SoC families, soc_version strings, bf16 / aclnn-only /
  JIT defaults (hand-assembled from torch_npu ``NpuVariables.{h,cpp}`` @
  9e73e708…, the RecSDK family map and the CANN ATC ``--soc_version`` docs).
- ``version_matrix.json`` — torch_npu ↔ torch ↔ CANN rows and the torch ↔ Python
  table, parsed from Ascend/pytorch ``COMPATIBILITY.en.md`` @ 9e73e708….
- ``cann_hdk_recommended.json`` — CANN → driver/firmware pairs from the install
  guide data (``package_info.js``) plus the vllm-ascend validated stack.

The install-info inner-version codes (``V100R001C23`` …) come from
``op-support-and-versions.md`` §5.2 (observed samples, inferred mapping) and are
written with ``verified: false``.

Usage: ``python tools/kb_versions.py [SHARED_DIR] [OUT_DIR]`` or
``build(shared_dir, out_dir)`` (called by ``tools/build_kb.py``).  Output is
deterministic (sorted keys, no timestamps) so a rebuild shows no diff.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_SHARED = os.path.join(os.path.dirname(REPO), "shared", "reference")
DEFAULT_OUT = os.path.join(REPO, "src", "ascendify", "kb", "data")

#: soc_versions.json family key → (short family code, Atlas series, common name)
FAMILY_CODES = {
    "ascend910": ("910", "Atlas training series (1st gen)", "Ascend 910 (1st gen, '910A')"),
    "ascend910b": ("910B", "Atlas A2", "Ascend 910B"),
    "ascend910_93": ("910C", "Atlas A3", "Ascend 910_93 (910C)"),
    "ascend950": ("950", "Ascend 950", "Ascend 950"),
    "ascend310p": ("310P", "Atlas inference series", "Ascend 310P"),
    "ascend310b": ("310B", "Atlas 200I/500 A2", "Ascend 310B"),
    "ascend310": ("310", "Atlas 200/300/500 (legacy)", "Ascend 310 (legacy)"),
}

#: torch_npu IsBF16Supported() is ``GetSocVersion() >= SocVersion::Ascend910B1``
#: (enum value 220, op-support-and-versions.md §6).  Where the hand-assembled
#: ``bf16`` flag disagrees with that enum ordering we publish ``None`` (unknown).
BF16_ENUM_THRESHOLD = 220

#: driver compatibility codes (op-support-and-versions.md §5.2, observed samples).
INNER_CODES = {
    "cann": {"C19": ["8.0.RC3"], "C20": ["8.0.0"], "C21": ["8.1.RC1"], "C22": ["8.2.RC1"],
             "C23": ["8.3.RC1", "8.3.RC2"]},
    "driver": {"C15": ["24.1.rc1"], "C18": ["24.1.rc2"], "C21": ["25.0.rc1.1"], "C23": ["25.3.rc1"]},
}


def _resolve_derived(shared_dir: str) -> str:
    """Accept the ``reference`` folder, its ``data`` folder or ``data/derived``."""
    for cand in (os.path.join(shared_dir, "data", "derived"), os.path.join(shared_dir, "derived"), shared_dir):
        if os.path.isfile(os.path.join(cand, "soc_versions.json")):
            return cand
    raise SystemExit(f"kb_versions: no soc_versions.json under {shared_dir} (expected <reference>/data/derived/)")


def _load(path: str) -> Any:
    with open(path, "rb") as fh:
        raw = fh.read()
    return json.loads(raw.decode("utf-8")), hashlib.sha256(raw).hexdigest()


def _input_record(derived: str, name: str, sha: str, upstream: Any) -> Dict[str, Any]:
    return {"file": f"reference/data/derived/{name}", "sha256": sha, "upstream": upstream}


def build_chips(soc: Dict[str, Any], sha: str) -> Dict[str, Any]:
    """Return the JSON-able chip table: one entry per soc_version string."""
    chips: Dict[str, Any] = {}
    families: Dict[str, Any] = {}
    for key, fam in soc.get("families", {}).items():
        code, series, common = FAMILY_CODES.get(key, (key, None, fam.get("chip", key)))
        bf16 = fam.get("bf16")
        bf16_note = None
        enum = fam.get("torch_npu_enum_range")
        if bf16 is not None and enum:
            by_enum = enum[0] >= BF16_ENUM_THRESHOLD
            if by_enum != bf16:
                bf16_note = (
                    f"sources disagree: soc_versions.json says bf16={str(bf16).lower()}, but torch_npu "
                    f"IsBF16Supported() (SocVersion >= Ascend910B1 = {BF16_ENUM_THRESHOLD}) returns "
                    f"{str(by_enum).lower()} for enum {enum[0]}..{enum[1]}; published as unknown")
                bf16 = None
        families[code] = {
            "key": key,
            "name": common,
            "chip": fam.get("chip"),
            "series": series,
            "products": fam.get("products", []),
            "kernels_package": fam.get("kernels_package_suffix"),
            "bf16": bf16,
            "bf16_note": bf16_note,
            "aclnn_only": fam.get("aclnn_only", False),
            "default_jit_compile": fam.get("default_jit_compile"),
            "torch_npu_supported": enum is not None,
            "torch_npu_enum_range": enum,
            "note": fam.get("note"),
        }
        for sv in fam.get("soc_versions", []):
            chips[sv] = {"family": code}
    return {
        "_provenance": {
            "built_by": "tools/kb_versions.py",
            "inputs": [_input_record("", "soc_versions.json", sha, soc.get("_source", []))],
            "derive_from_npu_smi": soc.get("derive_from_npu_smi", {}),
            "bf16_rule": "torch_npu IsBF16Supported() = SocVersion >= Ascend910B1 "
                         "(op-support-and-versions.md §6); hand flag kept unless the two disagree",
        },
        "families": families,
        "soc_versions": chips,
        "soc_version_order": list(chips),
        "prefix_families": {"Ascend950": "950"},
    }


def build_versions(matrix: Dict[str, Any], msha: str, hdk: Dict[str, Any], hsha: str) -> Dict[str, Any]:
    """Return the JSON-able version table (releases, Python table, CANN → HDK, codes)."""
    releases: List[Dict[str, Any]] = []
    for row in matrix.get("releases", []):
        tnpu = str(row["torch_npu"]).strip()
        pre = None
        if " " in tnpu:  # '1.11.0.rc2 (beta)'
            tnpu, pre = tnpu.split(" ", 1)
            pre = pre.strip("() ")
        branch = row.get("branch", "")
        ext = branch.split("-", 1)[1] if branch.startswith("v") and "-" in branch else branch
        rec = {"torch_npu": tnpu, "torch": row["torch"], "cann": row["cann"], "branch": branch,
               "extension_release": ext}
        if pre:
            rec["label"] = pre
        releases.append(rec)
    hdk_rows = {}
    for cann, per_chip in hdk.get("cann", {}).items():
        hdk_rows[cann] = per_chip
    return {
        "_provenance": {
            "built_by": "tools/kb_versions.py",
            "inputs": [
                _input_record("", "version_matrix.json", msha, matrix.get("source")),
                _input_record("", "cann_hdk_recommended.json", hsha, hdk.get("_source")),
            ],
            "notes": matrix.get("notes", []),
        },
        "recommended": matrix.get("recommended", {}),
        "releases": releases,
        "python_by_torch": matrix.get("python_by_torch", {}),
        "extension_release_to_cann": matrix.get("extension_release_to_cann", {}),
        "cann_hdk": {
            "meaning": hdk.get("_meaning"),
            "rows": hdk_rows,
            "package_name_patterns": hdk.get("package_name_patterns", {}),
        },
        "inner_version_codes": {
            "source": "op-support-and-versions.md §5.2 (codes observed in install-info samples; "
                      "mapping inferred, driver 25.x/26.x also seen with C10 codes)",
            "verified": False,
            "cann": INNER_CODES["cann"],
            "driver": INNER_CODES["driver"],
        },
    }


def _dump(obj: Any) -> bytes:
    return (json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _pypi_wheels(derived: str) -> List[str]:
    """torch_npu versions whose PyPI wheels the research downloaded
    (``reference/data/torch_npu_wheels/<version>/``, data/README.md §1)."""
    wheels = os.path.join(os.path.dirname(derived), "torch_npu_wheels")
    try:
        return sorted(d for d in os.listdir(wheels) if os.path.isdir(os.path.join(wheels, d)))
    except OSError:
        return []


def build(shared_dir: str, out_dir: str) -> List[str]:
    """Derive ``chips.json`` and ``versions.json`` into ``out_dir``; return the paths written.

    Raises ``SystemExit`` with one line if the inputs are missing.
    """
    derived = _resolve_derived(shared_dir)
    soc, ssha = _load(os.path.join(derived, "soc_versions.json"))
    matrix, msha = _load(os.path.join(derived, "version_matrix.json"))
    hdk, hsha = _load(os.path.join(derived, "cann_hdk_recommended.json"))
    os.makedirs(out_dir, exist_ok=True)
    written = []
    versions = build_versions(matrix, msha, hdk, hsha)
    known = {r["torch_npu"] for r in versions["releases"]}
    versions["pypi_builds_not_in_table"] = {
        "source": "PyPI torch-npu wheels listed in reference/data/README.md §1 "
                  "(op-support-and-versions.md §5.1: later posts; 2.13/2.14 are early builds from master)",
        "torch_npu": [v for v in _pypi_wheels(derived) if v not in known],
    }
    for name, obj in (("chips.json", build_chips(soc, ssha)),
                      ("versions.json", versions)):
        path = os.path.join(out_dir, name)
        data = _dump(obj)
        tmp = path + ".tmp"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        written.append(path)
    return written


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    shared = argv[0] if argv else DEFAULT_SHARED
    out = argv[1] if len(argv) > 1 else DEFAULT_OUT
    for path in build(shared, out):
        print(f"wrote {os.path.relpath(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
