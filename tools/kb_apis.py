"""Native-API support notes and deprecated custom APIs (build-time only).

Inputs (read-only, under ``<shared>/data``):

* ``native_api_docs/native_api_support_<torch>[-cards]_<lang>.json`` — the
  torch_npu "PyTorch native API support list" markdown parsed by the
  op-support research (Ascend/pytorch GitHub mirror; commit per file).  The
  Chinese lists give the structured fields (supported, dtypes,
  may_fallback_cpu, hardware); the English 2.10 list only supplies English
  note text (its parsed dtype fields are unreliable, e.g. "Supports bfloat16,
  float16" yields only integer dtypes), matched by API name.
* ``op_plugin/<branch>/deprecated.yaml`` — deprecated ``torch_npu.npu_*``
  APIs with their replacements, per op-plugin release branch.
* ``torch_npu_wheels/<ver>/npu_native_functions_by_codegen.yaml`` ``custom``
  section — which ``npu_*`` ops each wheel registers (first/last release).

Output: ``kb/data/apis.json.gz`` and ``kb/data/deprecated.json``.
"""

from __future__ import annotations

import glob
import json
import os
import re
from typing import Any

HARDWARE_SHORT = {"Atlas A2 训练系列产品": "A2", "Atlas A3 训练系列产品": "A3", "Ascend 950DT": "950DT"}

# English renderings of the fixed phrases of the Chinese lists.
ZH_EN = [
    ("可能回退至CPU执行", "may fall back to CPU"),
    ("仅支持", "supports only "),
    ("支持", "supports "),
    ("，", ", "),
    ("。", ". "),
    ("；", "; "),
    ("：", ": "),
]


def _doc_id(fname: str) -> str:
    m = re.match(r"native_api_support_(.+)_(zh|en)\.json$", os.path.basename(fname))
    return m.group(1) + ("" if m.group(2) == "zh" else "_en")


def build_api_notes(data: str) -> "dict[str, Any]":
    files = sorted(glob.glob(os.path.join(data, "native_api_docs", "*.json")))
    sources: dict = {}
    strings: list = []
    sidx: dict = {}

    def intern(s: str) -> int:
        if s not in sidx:
            sidx[s] = len(strings)
            strings.append(s)
        return sidx[s]

    apis: dict = {}
    en_notes: dict = {}
    for f in files:
        with open(f, encoding="utf-8") as fh:
            doc = json.load(fh)
        did = _doc_id(f)
        src = dict(doc.get("source", {}))
        src.update(torch=doc.get("torch_version"), copy="reference/data/native_api_docs/" + os.path.basename(f),
                   licence="BSD-3-Clause (Ascend/pytorch docs)",
                   layout="cards" if "cards" in did or src.get("ref") == "HEAD" else "table")
        if did.endswith("_en"):
            src["use"] = "English note text only"
            for name, e in doc["apis"].items():
                if e.get("notes"):
                    en_notes[name] = e["notes"]
            sources[did] = src
            continue
        sources[did] = src
        for name, e in doc["apis"].items():
            hw = ",".join(f"{HARDWARE_SHORT.get(k, k)}:{int(bool(v))}" for k, v in sorted((e.get("hardware") or {}).items()))
            apis.setdefault(name, {})[did] = [int(bool(e.get("supported"))), ",".join(e.get("dtypes") or []),
                                              int(bool(e.get("may_fallback_cpu"))), intern(e.get("notes") or ""), hw]
    en = {name: intern(text) for name, text in en_notes.items() if name in apis}
    return {"schema": 1, "sources": sources, "docs": [d for d in sources if not d.endswith("_en")],
            "strings": strings, "apis": apis, "en_notes": en,
            "semantics": ("dtype lists are the docs' verified dtypes, not hard kernel limits; APIs absent from a "
                          "list are 'not verified', not unsupported (reference/op-support-and-versions.md §1.4)")}


def build_deprecated(data: str, wheel_customs: "dict[str, set]") -> "dict[str, Any]":
    import yaml
    out: dict = {}
    branches = []
    def bkey(p):
        b = os.path.basename(os.path.dirname(p))
        return (1, ()) if b == "master" else (0, tuple(int(x) if x.isdigit() else 0 for x in b.replace("rc", ".").split(".")))
    for path in sorted(glob.glob(os.path.join(data, "op_plugin", "*", "deprecated.yaml")), key=bkey):
        branch = os.path.basename(os.path.dirname(path))
        branches.append(branch)
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh) or {}
        for e in doc.get("deprecated") or []:
            name = str(e.get("name"))
            ent = out.setdefault(name, {"replace": e.get("replace"), "branches": []})
            ent["branches"].append(branch)
            if e.get("replace") and not ent.get("replace"):
                ent["replace"] = e["replace"]
    rels = sorted(wheel_customs, key=lambda v: [int(x) for x in re.findall(r"\d+", v)])
    for name, ent in out.items():
        present = [r for r in rels if name in wheel_customs[r]]
        ent["registered_in_wheels"] = present
    commits = {}
    readme = os.path.join(data, "README.md")
    with open(readme, encoding="utf-8") as fh:
        for line in fh:
            m = re.match(r"\|\s*([0-9a-z.]+)\s*\|\s*([0-9a-f]{40})\s*\|\s*(\d{4}-\d\d-\d\d)", line)
            if m:
                commits[m.group(1)] = {"commit": m.group(2), "date": m.group(3)}
    return {"schema": 1,
            "source": {"package": "op-plugin", "repository": "Ascend/op-plugin (GitHub mirror)",
                       "file": "op_plugin/config/deprecated.yaml", "licence": "BSD-3-Clause",
                       "branches": {b: commits.get(b, {}) for b in branches}},
            "deprecated": dict(sorted(out.items()))}


def _load_trace() -> "dict | None":
    """Newest ``tools/kb_inputs/api_trace_torch*.json.gz`` (see kb_trace.py)."""
    import gzip
    here = os.path.dirname(os.path.abspath(__file__))
    files = sorted(glob.glob(os.path.join(here, "kb_inputs", "api_trace_torch*.json.gz")),
                   key=lambda p: [int(x) for x in re.findall(r"\d+", os.path.basename(p))])
    if not files:
        return None
    with gzip.open(files[-1], "rb") as fh:
        return json.loads(fh.read().decode("utf-8"))


def build(shared: str, w, index: list) -> dict:
    """Hook called by build_kb.py; writes apis.json.gz and deprecated.json."""
    import build_kb
    import kb_ops
    data = os.path.join(shared, "data")
    notes = build_api_notes(data)
    trace = _load_trace()
    if trace:
        notes["aten"] = trace["apis"]
        notes["aten_source"] = {k: trace[k] for k in ("torch", "method", "source")}
    w.put("apis.json.gz", build_kb.gz(build_kb.dumps(notes)))
    customs = {}
    for d in glob.glob(os.path.join(data, "torch_npu_wheels", "*")):
        with open(os.path.join(d, "npu_native_functions_by_codegen.yaml"), encoding="utf-8") as fh:
            customs[os.path.basename(d)] = set(kb_ops.parse_npu_yaml(fh.read())["custom"])
    dep = build_deprecated(data, customs)
    w.put("deprecated.json", json.dumps(dep, ensure_ascii=False, indent=1).encode("utf-8") + b"\n")
    counts = {}
    for did in notes["docs"]:
        ent = [v[did] for v in notes["apis"].values() if did in v]
        counts[did] = {"apis": len(ent), "unsupported": sum(1 for e in ent if not e[0]),
                       "may_fallback_cpu": sum(1 for e in ent if e[2]),
                       "with_dtypes": sum(1 for e in ent if e[1])}
    return {"api_docs": counts, "deprecated_apis": len(dep["deprecated"])}
