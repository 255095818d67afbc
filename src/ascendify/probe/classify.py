"""Classify recorded aten ops against the KB: CPU fallback, AI_CPU risk, dtypes, chip, docs.

Input: the recorder's op list (:meth:`OpRecorder.result`).  Output: per-op
rows and findings, each naming the user source line(s), the source of the
fact and a replacement recipe where the KB has one.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ascendify.kb import DATA_DIR
from ascendify.kb import apis as kbapis
from ascendify.kb import ops as kbops
from ascendify.kb.aicpu import aicpu_reason

SEVERITY_ORDER = ("error", "warning", "info")
#: view / metadata ops: no kernel runs, so their dtype is not a kernel-support question
VIEW_OPS = frozenset({"expand", "view", "_unsafe_view", "t", "transpose", "permute", "slice", "select", "unsqueeze",
                      "squeeze", "detach", "alias", "as_strided", "reshape", "_reshape_alias", "unbind", "split",
                      "split_with_sizes", "narrow", "diagonal", "view_as_real", "view_as_complex", "lift_fresh",
                      "empty_like", "empty", "empty_strided", "_local_scalar_dense", "chunk", "expand_as"})
COMPLEX = ("complex32", "complex64", "complex128")
_MAP: dict = {}

FLOAT64_SOURCE = ("native API support lists: 878 of 1,181 dtype-restricted APIs in the 2.13 list omit fp64; "
                  "Tensor.double note (some NPU interfaces return fp32 for double, may fall back to CPU) — "
                  "reference/op-support-and-versions.md §4 'float64'")
COMPLEX_SOURCE = ("reference/op-support-and-versions.md §4 'complex' (CANN operator guide: complex dtypes typically "
                  "AI CPU; disabled-test reasons aclnnDiv/aclnnIsClose not implemented for DT_COMPLEX64)")


def aten_to_cann(op: str) -> str:
    """CANN op type for an aten overload (``nonzero`` → ``NonZero``, ``add.Tensor`` → ``Add``)."""
    if not _MAP:
        with open(os.path.join(DATA_DIR, "curated.toml"), "rb") as fh:
            _MAP.update(tomllib.load(fh).get("aten_to_cann", {}))
    if op in _MAP:
        return _MAP[op]
    base = op.split(".")[0].strip("_")
    return "".join(p.capitalize() for p in base.split("_") if p)


def _lines(rec: dict, n: int = 3) -> list:
    return list(rec.get("lines", {}))[:n]


def _dtypes(rec: dict) -> list:
    out = []
    for s in rec.get("signatures", []):
        for d in s["dtypes"]:
            if d not in out:
                out.append(d)
    return out


def npu_composites(records: list, table) -> dict:
    """API (as recorded, e.g. ``torch._C._nn.scaled_dot_product_attention``) -> the aten op of that
    name when torch decomposes it (CompositeImplicitAutograd) but torch_npu registers its own NPU
    kernel for it (``table``: a KB release) and the op itself was not recorded (the CPU run
    decomposed it).  ``ascendify run`` installs such ops as one kernel (run/common.py
    ``install_fused``); probe judges the ops under them the same way."""
    recorded = {r["op"] for r in records}
    out: dict = {}
    for rec in records:
        for api in rec.get("apis", {}):
            if api in out:
                continue
            own = kbapis.name_based_aten(api)
            orow = table.ops.get(own)
            if (orow and orow[0] == "npu_kernel" and orow[1] != "torch_npu_core"
                    and "CompositeImplicitAutograd" in orow[2] and own not in recorded
                    and not any(o.startswith(own + ".") for o in recorded)):
                out[api] = own
    return out


def classify(records: list, torch_npu: Optional[str], chip: Optional[str] = None, cann: Optional[str] = None,
             fallback_disabled: Optional[bool] = None) -> dict:
    """Rows and findings for recorded ops under a torch_npu release and chip.

    ``fallback_disabled``: treat CPU fallbacks as errors (default: the current
    ``TORCH_NPU_FALLBACK_CPU_DISABLE`` environment variable is ``1``).
    Raises ``ValueError`` for a malformed version.
    """
    release, warning = kbops.resolve_release(torch_npu)
    table = kbops.load_release(release)
    if fallback_disabled is None:
        fallback_disabled = os.environ.get("TORCH_NPU_FALLBACK_CPU_DISABLE") == "1"
    chip_obj = None
    warnings = [warning] if warning else []
    if chip:
        try:
            from ascendify.kb.chips import chip_info
            chip_obj = chip_info(chip)
        except ImportError:
            chip_obj = None
        if chip_obj is None:
            warnings.append(f"unknown chip '{chip}'; chip checks skipped")
    rows, findings = [], []
    msgs = table.meta.get("hardcoded_fallback_messages", [])
    owned = npu_composites(records, table)
    parts: dict = {}  # composite aten op -> the recorded ops of its CPU decomposition
    for rec in records:
        op = rec["op"]
        cls, impl, disp = table.ops.get(op, ("unknown", "", ""))
        owners = {owned.get(a) for a in rec.get("apis", {})}
        if rec.get("apis") and None not in owners and cls == "cpu_fallback":
            # only ever reached through APIs whose composite op torch_npu runs as one NPU kernel
            # (SDPA): the op is the CPU's choice of kernel for it, judged as the op the user called
            own = sorted(owners)[0]
            parts.setdefault(own, []).append(op)
            cls, impl, disp = "npu_composite", f"aten::{own}", ""
        dts = _dtypes(rec)
        row = {"op": op, "count": rec["count"], "class": cls,
               "short": "inside an NPU kernel" if cls == "npu_composite" else kbops.SHORT_LABELS.get(cls, cls),
               "npu_impl": impl, "dtypes": dts, "shapes": [s["shapes"] for s in rec.get("signatures", [])][:2],
               "lines": _lines(rec), "apis": list(rec.get("apis", {}))[:3], "phases": rec.get("phases", []),
               "inside": rec.get("inside", [])}
        rows.append(row)
        base = dict(op=op, lines=row["lines"], apis=row["apis"], phases=row["phases"])
        recipe = _recipe(op, row["apis"])
        if cls == "cpu_fallback":
            cuda_only = disp and not disp.startswith(("structured", "none")) and "CPU" not in disp.split(",")
            findings.append(dict(base, kind="cpu_fallback",
                                 severity="error" if (fallback_disabled or cuda_only) else "warning",
                                 message=(f"aten::{op} has no NPU kernel in torch_npu {release}: CPU fallback "
                                          + ("(no CPU kernel either: it fails)" if cuda_only else
                                             "(raises with TORCH_NPU_FALLBACK_CPU_DISABLE=1)" if not fallback_disabled
                                             else "— an error because TORCH_NPU_FALLBACK_CPU_DISABLE=1")),
                                 source=kbops.short_provenance(table) + "; " + kbops.FALLBACK_SOURCE, recipe=recipe))
        elif cls == "not_dense":
            findings.append(dict(base, kind="no_dense_kernel", severity="error",
                                 message=f"aten::{op} has only sparse/quantized/nested kernels: fails on a dense NPU tensor",
                                 source=kbops.short_provenance(table), recipe=recipe))
        elif cls == "unknown":
            findings.append(dict(base, kind="unknown_op", severity="info",
                                 message=f"aten::{op} is not in the torch_npu {release} table (torch {table.torch}); "
                                         "support unknown",
                                 source=kbops.short_provenance(table), recipe=None))
        for m in msgs:
            b = op.split(".")[0]
            if re.search(rf"aten::{re.escape(b)}(?:[ ,.']|$)", m):
                findings.append(dict(base, kind="conditional_fallback", severity="warning", message=m,
                                     source=f"libtorch_npu.so strings, torch_npu {release}", recipe=recipe))
                break
        if any(d == "float64" for d in dts) and op.split(".")[0] not in VIEW_OPS:
            findings.append(dict(base, kind="float64", severity="warning",
                                 message=f"aten::{op} runs on float64: many NPU kernels do not take fp64 "
                                         "(cast to float32, or AI_CPU / CPU paths)",
                                 source=FLOAT64_SOURCE,
                                 recipe="Use float32 (torch.set_default_dtype(torch.float32); .float() at the source)."))
        if any(d in COMPLEX for d in dts):
            findings.append(dict(base, kind="complex", severity="warning",
                                 message=f"aten::{op} runs on a complex dtype ({', '.join(d for d in dts if d in COMPLEX)})",
                                 source=COMPLEX_SOURCE, recipe="Keep real and imaginary parts as separate real tensors."))
        if chip_obj is not None and chip_obj.bf16 is False and "bfloat16" in dts:
            findings.append(dict(base, kind="bf16_chip", severity="error",
                                 message=f"aten::{op} runs on bfloat16 but {chip_obj.soc_version} has no bf16",
                                 source=chip_obj.source, recipe="Use float16 with a loss scaler on this chip."))
        if cls in ("npu_kernel", "npu_via_structured_out") and dts:
            why = aicpu_reason(aten_to_cann(op), dts, cann)
            if why:
                findings.append(dict(base, kind="ai_cpu", severity="warning",
                                     message=f"aten::{op} ({aten_to_cann(op)}) likely on AI_CPU: {why.split(' (source:')[0]}",
                                     source=why[why.find("(source:") + 9:-1] if "(source:" in why else "mstt",
                                     recipe=recipe))
    # API-level: doc notes, deprecated torch_npu APIs
    seen_api = {}
    for rec in records:
        for api, n in rec.get("apis", {}).items():
            seen_api.setdefault(api, rec)
    docs_ids, _ = kbapis.doc_for_torch(table.torch)
    hwkey = kbapis.FAMILY_HARDWARE.get(chip_obj.family) if chip_obj is not None else None
    for api, rec in seen_api.items():
        notes = [n for n in kbapis.api_notes(api, table.torch) if n.get("listed")]
        base = dict(op=rec["op"], lines=_lines(rec), apis=[api], phases=rec.get("phases", []))
        if notes and all(not n["supported"] for n in notes):
            findings.append(dict(base, kind="doc_unsupported", severity="warning",
                                 message=f"{api} is marked unsupported in the native-API list ({notes[0]['doc']})",
                                 source=notes[0]["source"], recipe=_recipe(rec["op"], [api])))
        elif any(n["may_fallback_cpu"] for n in notes):
            findings.append(dict(base, kind="doc_may_fallback", severity="info",
                                 message=f"{api}: the native-API list says it may fall back to CPU ({notes[0]['doc']})",
                                 source=notes[0]["source"], recipe=_recipe(rec["op"], [api])))
        if hwkey and any(n["hardware"].get(hwkey) is False for n in notes):
            findings.append(dict(base, kind="hardware", severity="warning",
                                 message=f"{api} is marked ✘ for {hwkey} ({chip_obj.soc_version}) in the native-API list",
                                 source=notes[0]["source"], recipe=None))
        own = owned.get(api)
        if own is not None:
            orow = table.ops[own]
            inner = sorted(set(parts.get(own, [])))
            judged = (f"; judged as that op, so {', '.join(inner)} (the CPU's kernel choice for it) is no CPU fallback"
                      if inner else "")
            findings.append(dict(base, kind="npu_override", severity="info",
                                 message=(f"{api}: torch decomposes aten::{own} (CompositeImplicitAutograd) and the ops "
                                          f"recorded under it are the CPU's decomposition, but torch_npu {release} registers "
                                          f"its own kernel ({orow[1]}), which runs on the NPU instead{judged}"),
                                 source=kbops.short_provenance(table) + "; reference/op-support-and-versions.md §2.1 caveat",
                                 recipe=None))
        dep = kbapis.deprecated(api) if "npu_" in api else None
        if dep:
            findings.append(dict(base, kind="deprecated", severity="warning",
                                 message=f"{api} is deprecated" + (f"; use {dep['replace']}" if dep.get("replace") else ""),
                                 source=dep["source"], recipe=dep.get("replace")))
    findings.sort(key=lambda f: (SEVERITY_ORDER.index(f["severity"]), f["kind"], f["op"]))
    return {"torch_npu": release, "torch": table.torch, "requested": torch_npu, "chip": chip_obj.soc_version if chip_obj else chip,
            "cann": cann, "warnings": warnings, "rows": rows, "findings": findings,
            "fallback_disabled": bool(fallback_disabled), "source": kbops.short_provenance(table)}


def _recipe(op: str, apis: list) -> Optional[str]:
    r = kbapis.recipes_for([op], apis)
    return r[0]["text"] if r else None
