"""Refresh the generated counts block of docs/ops-and-probe.md from the KB build summary.

The block sits between ``<!-- kb-counts:start -->`` and ``<!-- kb-counts:end -->``;
everything else in the file is hand-written.  ``tests/kb/test_docs_counts.py``
checks that the numbers quoted there match the built data.
"""

from __future__ import annotations

import os

START = "<!-- kb-counts:start -->"
END = "<!-- kb-counts:end -->"
CLASS_ORDER = ["npu_kernel", "npu_via_structured_out", "npu_foreach_slow", "composite_implicit",
               "composite_explicit", "cpu_fallback", "not_dense", "npu_only_not_in_torch_yaml"]
CLASS_HEAD = ["NPU kernel", "via .out", "foreach slow", "decomposes", "device-generic", "CPU fallback",
              "no dense kernel", "NPU-only name"]


def render(summary: dict) -> str:
    rel = summary["releases"]
    out = [START, "",
           "| torch_npu | torch | aten overloads | " + " | ".join(CLASS_HEAD)
           + " | NPU-registered | custom npu_* | differs from research CSV |",
           "|---|---|---:|" + "---:|" * len(CLASS_HEAD) + "---:|---:|---:|"]
    for r in rel:
        cc = r["class_counts"]
        out.append(f"| {r['torch_npu']} | {r['torch']} | {r['aten_overloads']} | "
                   + " | ".join(str(cc.get(c, 0)) for c in CLASS_ORDER)
                   + f" | {r['npu_registered_aten_overloads']} | {r['custom_npu_ops']} | "
                   f"{r.get('disagreements_with_research_csv', 0)} |")
    out += ["", "Implementation paths of the NPU-registered aten overloads (`impl_ns`):", "",
            "| torch_npu | " + " | ".join(["acl_op", "acl_op+op_api", "op_api", "acl_op+dvm+op_api", "dvm+op_api",
                                           "torch_npu_core"]) + " |",
            "|---|" + "---:|" * 6]
    for r in rel:
        s = r["impl_split"]
        out.append(f"| {r['torch_npu']} | " + " | ".join(str(s.get(k, 0)) for k in
                                                          ["acl_op", "acl_op+op_api", "op_api", "acl_op+dvm+op_api",
                                                           "dvm+op_api", "torch_npu_core"]) + " |")
    docs = summary.get("api_docs", {})
    if docs:
        out += ["", "Native-API support lists (torch_npu docs) in the KB:", "",
                "| list | APIs | marked unsupported | may fall back to CPU | with a dtype list |", "|---|---:|---:|---:|---:|"]
        for did in sorted(docs, key=lambda d: [int(x) for x in d.split("-")[0].split(".")] + [len(d)]):
            c = docs[did]
            out.append(f"| {did} | {c['apis']} | {c['unsupported']} | {c['may_fallback_cpu']} | {c['with_dtypes']} |")
    out += ["", f"Deprecated torch_npu custom APIs (op-plugin deprecated.yaml): {summary.get('deprecated_apis', 0)}.",
            "", END]
    return "\n".join(out)


def refresh(path: str, summary: dict, w) -> None:
    """Replace the block in ``path`` (no-op if the file or markers are missing)."""
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if START not in text or END not in text:
        return
    new = text[: text.index(START)] + render(summary) + text[text.index(END) + len(END):]
    if new == text:
        return
    w.changed.append(os.path.relpath(path, os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    if not w.check:
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(new)
        os.replace(tmp, path)
