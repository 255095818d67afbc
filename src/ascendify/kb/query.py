"""``ascendify ops`` lookups: an aten op or a torch API → support per release, risks, recipes.

:func:`lookup` returns a JSON-able dict (the ``--format json`` output).  All
facts come from the KB tables (see :mod:`ascendify.kb.ops`,
:mod:`ascendify.kb.apis`, :mod:`ascendify.kb.aicpu`) and carry their source.
"""

from __future__ import annotations

from typing import Optional

from ascendify.kb import apis as kbapis
from ascendify.kb import ops as kbops

FALLBACK_TEXT = ("no PrivateUse1 kernel: torch_npu's boxed CPU fallback copies inputs to the host, runs the CPU "
                 "kernel and copies back (warning 'CAUTION: The operator … will fall back to run on the CPU'); "
                 "with TORCH_NPU_FALLBACK_CPU_DISABLE=1 it raises instead")


def _chip(chip: Optional[str]):
    if not chip:
        return None, None
    try:
        from ascendify.kb.chips import chip_info
    except ImportError:  # doctor helper's module missing
        return None, "chip table not available in this installation"
    info = chip_info(chip)
    if info is None:
        return None, f"unknown chip '{chip}' (expected a soc_version such as Ascend910B3); chip checks skipped"
    return info, None


def classify_query(query: str) -> "tuple[str, str]":
    """(``"aten"`` | ``"api"`` | ``"name"`` | ``"npu"``, normalized text)."""
    q = query.strip()
    if q.startswith(("aten::", "aten.", "torch.ops.aten.")):
        return "aten", kbops.normalize_op(q)
    if q.startswith(("torch_npu.", "torch.ops.npu.")) or q.startswith("npu_"):
        return "npu", q.split(".")[-1] if not q.startswith("npu_") else q
    if "." in q.split("(")[0] and not q.split(".")[-1].isidentifier() is False:
        head = q.split(".")[0]
        if head in ("torch", "Tensor", "F", "nn", "linalg", "fft", "special", "functional", "tensor", "x"):
            return "api", kbapis.normalize_api(q)
        # "nanmean.out" style aten overload
        return "aten", kbops.normalize_op(q)
    return "name", q


def _support_rows(names: "list[str]", rels: "list[str]") -> "list[dict]":
    rows = []
    for rel in rels:
        table = kbops.load_release(rel)
        for n in names:
            r = table.ops.get(n)
            cls, impl, disp = r if r else ("unknown", "", "")
            rows.append({"overload": n, "torch_npu": rel, "torch": table.torch, "class": cls,
                         "label": kbops.CLASS_LABELS.get(cls, cls),
                         "short": kbops.SHORT_LABELS.get(cls, cls), "npu_impl": impl, "torch_dispatch": disp,
                         "research_csv_class": table.meta.get("disagreements", {}).get(n, {}).get("research_csv"),
                         "op_plugin_master": _opp(table, n)})
    return rows


def _opp(table, n: str):
    """What op-plugin master says when it differs from the wheel (None when they agree)."""
    opp = table.meta.get("op_plugin") or {}
    d = opp.get("differences", {}).get(n)
    if d is None:
        return None
    return {"impl": d["op_plugin"], "torch_line": opp.get("torch_line"),
            "commit": (opp.get("source") or {}).get("commit", "")[:12]}


def _expand(names: "list[str]", rel: str, with_overloads: bool) -> "list[str]":
    table = kbops.load_release(rel)
    out = []
    for n in names:
        more = [o for o in table.overloads(n.split(".")[0]) if o != n] if with_overloads and "." not in n else []
        # aten::add is an overload packet with no overload of its own (no add.default): its overloads
        # are the rows, not an "unknown" one for the bare name
        cand = ([] if more and n not in table.ops else [n]) + more
        for c in cand:
            if c not in out:
                out.append(c)
    return out


def lookup(query: str, torch_npu: Optional[str] = None, all_versions: bool = False,
           chip: Optional[str] = None, release_reason: str = "") -> dict:
    """Everything the KB says about ``query`` (see module doc).

    Raises ``ValueError`` for a malformed ``torch_npu`` version.  Unknown
    names give ``found = False`` and empty support rows, never "supported".
    ``release_reason``: why ``torch_npu`` is the release asked for (the default's reason), echoed.
    """
    kind, norm = classify_query(query)
    release, warning = kbops.resolve_release(torch_npu)
    rels = kbops.releases() if all_versions else [release]
    if all_versions:
        warning = None
    warnings = [warning] if warning else []
    chip_obj, chip_warn = _chip(chip)
    if chip_warn:
        warnings.append(chip_warn)
    apis: list = []
    aten: list = []
    how = ""
    npu_dep = None
    if kind == "aten":
        aten = [norm]
    reached: list = []
    table = kbops.load_release(release)
    if kind == "api":
        apis = [norm]
        base = kbapis.name_based_aten(norm)
        if base in table.ops or table.overloads(base):
            aten = [base]
        reached, how = kbapis.aten_for_api(norm)
    elif kind == "npu":
        npu_dep = kbapis.deprecated(norm)
    else:
        if norm in table.ops or table.overloads(norm):
            aten = [norm]
        apis = kbapis.api_candidates(norm) if kind == "name" else []
        for a in apis:
            more, how = kbapis.aten_for_api(a)
            reached.extend(m for m in more if m not in reached)
    names = _expand(aten, release, with_overloads=True)
    names += [m for m in reached if m not in names]
    support = _support_rows(names, rels) if names else []
    for r in support:
        r["role"] = "named" if r["overload"].split(".")[0] in aten else "reached"
    # custom npu_* ops registered per release
    custom = []
    if kind == "npu":
        for rel in rels:
            t = kbops.load_release(rel)
            for k, v in t.custom.items():
                if k == norm or k.startswith(norm + "."):
                    custom.append({"op": k, "torch_npu": rel, "impl": v[0], "exposed": v[1]})
    torch_versions = []
    for rel in rels:
        tv = kbops.load_release(rel).torch
        if tv not in torch_versions:
            torch_versions.append(tv)
    notes = []
    for a in apis:
        for tv in (torch_versions if all_versions else torch_versions[:1]):
            for n in kbapis.api_notes(a, tv):
                n["torch"] = tv
                notes.append(n)
    risks = _risks(support, notes, chip_obj, release, rels)
    if npu_dep:
        risks.append({"kind": "deprecated", "text": f"torch_npu.{npu_dep['name']} is deprecated"
                      + (f"; use {npu_dep['replace']}" if npu_dep.get("replace") else " (no replacement named)"),
                      "source": npu_dep["source"]})
    recipes = kbapis.recipes_for(names, apis)
    if npu_dep and npu_dep.get("replace"):
        recipes = [{"text": f"Replace torch_npu.{npu_dep['name']} with {npu_dep['replace']}.",
                    "source": npu_dep["source"], "verified": True}] + recipes
    found = bool([r for r in support if r["class"] != "unknown"] or [n for n in notes if n.get("listed")] or custom or npu_dep)
    srcs = []
    for rel in rels:
        t = kbops.load_release(rel)
        srcs.append({"torch_npu": rel, "ops_table": kbops.provenance_text(t), "short": kbops.short_provenance(t)})
    return {
        "query": query, "kind": kind, "normalized": norm, "found": found,
        "torch_npu": None if all_versions else release, "requested": torch_npu, "releases": rels,
        "release_reason": None if all_versions else release_reason, "known_releases": len(kbops.releases()),
        "no_default_overload": [n for n in aten if n not in names],
        "warnings": warnings, "chip": chip_obj.soc_version if chip_obj else chip,
        "apis": apis, "aten_ops": names, "named_ops": [n for n in names if n.split(".")[0] in aten],
        "reached_ops": [n for n in names if n.split(".")[0] not in aten], "api_to_aten": how,
        "support": support, "custom_ops": custom, "api_notes": notes,
        "risks": risks, "recipes": [{"text": r["text"], "source": r["source"], "verified": bool(r.get("verified", False))}
                                     for r in recipes],
        "sources": srcs,
    }


def _risks(support: list, notes: list, chip, release: str, rels: list) -> list:
    risks = []
    fb = {}
    for r in support:
        if r["class"] == "cpu_fallback":
            fb.setdefault(r["overload"], []).append(r["torch_npu"])
    for op, where in fb.items():
        disp = next(r["torch_dispatch"] for r in support if r["overload"] == op)
        extra = ""
        if disp and "CPU" not in disp.split(",") and not disp.startswith(("structured", "none")):
            extra = " (no CPU kernel either: the fallback will fail at run time)"
        risks.append({"kind": "cpu_fallback", "op": op, "releases": where,
                      "text": f"aten::{op}: {FALLBACK_TEXT}{extra} — in {_span(where, rels)}",
                      "source": kbops.FALLBACK_SOURCE})
    # conditional fallbacks compiled into libtorch_npu.so
    for rel in rels:
        msgs = kbops.load_release(rel).meta.get("hardcoded_fallback_messages", [])
        for op in {r["overload"].split(".")[0] for r in support}:
            for m in msgs:
                if f"aten::{op} " in m or f"aten::{op}," in m or f"'aten::{op}'" in m or f"aten::{op}." in m:
                    key = ("conditional", op, m)
                    if not any(x.get("_key") == key for x in risks):
                        risks.append({"kind": "conditional_fallback", "op": op, "_key": key, "text": m,
                                      "source": f"libtorch_npu.so strings, torch_npu {rel} (BSD-3-Clause)"})
    for n in notes:
        if not n.get("listed"):
            continue
        tag = f"{n['api']} (torch {n['torch']} list {n['doc']})"
        if not n["supported"]:
            risks.append({"kind": "unsupported_doc", "text": f"{tag}: marked unsupported by the native-API list",
                          "source": n["source"]})
        if n["may_fallback_cpu"]:
            risks.append({"kind": "may_fallback_cpu", "text": f"{tag}: 'may fall back to CPU' (可能回退至CPU执行)",
                          "source": n["source"]})
        dts = n["dtypes"]
        if dts and "float64" not in dts:
            risks.append({"kind": "dtype", "text": f"{tag}: verified dtypes {', '.join(dts)} — float64 not listed",
                          "source": n["source"]})
        if chip is not None:
            hwkey = kbapis.FAMILY_HARDWARE.get(chip.family)
            if hwkey and n["hardware"] and hwkey in n["hardware"] and not n["hardware"][hwkey]:
                risks.append({"kind": "hardware", "text": f"{tag}: marked ✘ for {hwkey} ({chip.soc_version})",
                              "source": n["source"]})
            if chip.bf16 is False and dts and "bfloat16" in dts:
                risks.append({"kind": "bf16", "text": f"{tag}: bfloat16 is listed but {chip.soc_version} has no bf16",
                              "source": chip.source})
    for r in risks:
        r.pop("_key", None)
    return risks


def _span(where: list, rels: list) -> str:
    if where == rels and len(rels) > 1:
        return f"every release ({rels[0]} … {rels[-1]}, {len(rels)} releases)"
    return ", ".join(where)
