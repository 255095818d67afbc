"""Build ``kb/data/aicpu_rules.json`` from mstt's advisor ``aicpu_rules.yaml``.

Input (read-only): ``<shared>/data/third_party_rules/mstt_en_aicpu_rules.yaml``
(verbatim copy of ``profiler/msprof_analyze/advisor/rules/en/aicpu_rules.yaml``
from the mstt mirror, Apache-2.0) plus the ``running on AiCpu`` strings found in
``libtorch_npu.so`` of each torch_npu wheel
(``<shared>/data/torch_npu_wheels/<ver>/cpu_fallback_messages_in_libtorch_npu.txt``).
Build-time only (needs PyYAML); the package reads the JSON output.
"""

from __future__ import annotations

import os
import re
from typing import Any

MSTT_SOURCE = {
    "package": "mstt (msprof-analyze advisor)",
    "repository": "xiaobingling93-pixel/Ascend-mstt (GitHub mirror of Ascend/mstt)",
    "file": "profiler/msprof_analyze/advisor/rules/en/aicpu_rules.yaml",
    "commit": "99c2e0f990a17d328f487062acc9c490f7f6ff26",
    "licence": "Apache-2.0",
}

# Canonical dtype names (torch spelling) for the tokens mstt uses.
MSTT_DTYPES = {"float": "float32", "dt_bf16": "bfloat16"}


def _canon(tok: str) -> str:
    tok = str(tok).strip().lower()
    return MSTT_DTYPES.get(tok, tok)


def _uniq(seq):
    out = []
    for x in seq:
        if x not in out:
            out.append(x)
    return out


def _guide_text(s: str) -> str:
    """mstt's HTML suggestion → plain text (links are kept in ``url``)."""
    s = re.sub(r"<[^>]+>", "", s)
    s = re.sub(r"^Please modify source code followed by this LINK, ", "", s.replace("{}", "LINK"))
    s = s.replace(" by this LINK", " (see the mstt guide)")
    return s[:1].upper() + s[1:]


def build_aicpu(shared_data: str, wheel_dirs: "dict[str, str] | None" = None) -> "dict[str, Any]":
    """Return the JSON-able AI_CPU rule table.

    ``shared_data``: the ``reference/data`` folder. ``wheel_dirs``: torch_npu
    version → folder with ``cpu_fallback_messages_in_libtorch_npu.txt``.
    """
    import yaml  # build-time dependency only

    path = os.path.join(shared_data, "third_party_rules", "mstt_en_aicpu_rules.yaml")
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    rules = []
    for entry in doc.get("CommonChecker", []):
        for kind, body in entry.items():
            if kind != "DataTypeChecker":
                continue
            rules.append({
                "kind": "dtype",
                "cann_versions": [str(v) for v in body.get("cann_version", [])],
                "op_types": [str(o).lower() for o in body.get("op_type", [])],
                "ignore_types": [str(o).lower() for o in body.get("ignore_type", [])],
                "aicore_input_dtypes": _uniq(_canon(d) for d in body.get("input", [])),
                "aicore_output_dtypes": _uniq(_canon(d) for d in body.get("output", [])),
                "source": "mstt",
            })
    for entry in doc.get("ExampleGuideChecker", []):
        for kind, body in entry.items():
            rules.append({
                "kind": "guide",
                "checker": kind,
                "op_types": [str(o).lower() for o in body.get("op_type", [])],
                "suggestion": _guide_text(str(body.get("suggestion", ""))),
                "url": body.get("url", ""),
                "source": "mstt",
            })
    # Hard-coded AI_CPU warnings compiled into libtorch_npu.so.
    argsort = re.compile(r"kernel \[(\w+)\] can not support dtype ([\w ,]+?) on AiCore")
    found: "dict[tuple, list[str]]" = {}
    for ver, d in sorted((wheel_dirs or {}).items()):
        p = os.path.join(d, "cpu_fallback_messages_in_libtorch_npu.txt")
        if not os.path.exists(p):
            continue
        with open(p, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = argsort.search(line)
                if m:
                    dts = tuple(_canon(x) for x in re.split(r"\s*(?:,|or|and)\s*", m.group(2)) if x.strip())
                    found.setdefault((m.group(1).lower(), dts, line.strip()), []).append(ver)
    for (op, dts, msg), vers in sorted(found.items()):
        rules.append({
            "kind": "aicpu_dtypes",
            "op_types": [op],
            "aicpu_input_dtypes": list(dts),
            "message": msg,
            "torch_npu_versions": vers,
            "source": "libtorch_npu",
        })
    return {
        "schema": 1,
        "sources": {
            "mstt": MSTT_SOURCE,
            "libtorch_npu": {
                "package": "torch-npu (PyPI wheels)",
                "file": "torch_npu/lib/libtorch_npu.so (strings containing 'running on AiCpu')",
                "licence": "BSD-3-Clause",
            },
            "curated": {
                "package": "ascendify curated facts (kb/data/curated.toml)",
                "file": "see each rule's citation",
            },
        },
        "rules": rules,
    }


def curated_rules(path: str) -> "list[dict]":
    """``[[aicpu]]`` entries of ``kb/data/curated.toml`` as ``aicpu_dtypes`` rules."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    if not os.path.exists(path):
        return []
    with open(path, "rb") as fh:
        doc = tomllib.load(fh)
    out = []
    for e in doc.get("aicpu", []):
        out.append({
            "kind": "aicpu_dtypes",
            "op_types": [o.lower() for o in e["op_types"]],
            "aicpu_input_dtypes": [_canon(d) for d in e["aicpu_input_dtypes"]],
            "message": e["message"],
            "source": "curated",
            "citation": e["source"],
            "verified": bool(e.get("verified", False)),
        })
    return out
