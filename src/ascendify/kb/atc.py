"""ATC's ONNX operator support table (``kb/data/atc_onnx_ops.json``) and graph checks.

The table records, per ONNX ``op_type``, which of Huawei's published
"supported ONNX operator" lists (CANN 5.0.4, CANN 8.0.0) name it, and notes on
ops with known ATC trouble, each with its source and a ``verified`` flag.
Sources are listed in the JSON file's ``_sources``; per-operator opset ranges
were *not* read (``opset_verified = false``): the opset check uses the global
statements (ONNX 1.12 → opset ≤ 17; opset 11 recommended,
``accuracy-profiling-atc.md`` §1.5).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable

__all__ = ["AtcOpFinding", "load_table", "op_info", "check_ops", "check_opset"]


@lru_cache(maxsize=1)
def load_table() -> dict[str, Any]:
    """The parsed ``atc_onnx_ops.json`` (cached).  Keys: ``ops`` (op_type → entry),
    ``default_opset``, ``min_opset``, ``max_opset``, ``opset_verified``, ``_sources``."""
    text = resources.files("ascendify.kb").joinpath("data/atc_onnx_ops.json").read_text(encoding="utf-8")
    return json.loads(text)


def op_info(op_type: str) -> dict[str, Any] | None:
    """The table entry for an ONNX ``op_type`` (default domain), or ``None`` when
    neither list names it and no note exists."""
    return load_table()["ops"].get(op_type)


@dataclass
class AtcOpFinding:
    """One remark about the graph: ``level`` is ``"error"``, ``"warning"`` or ``"info"``;
    ``op_type``; ``nodes`` (up to 5 node names); ``message``; ``source``; ``verified``."""

    level: str
    op_type: str
    message: str
    nodes: list[str] = field(default_factory=list)
    count: int = 0
    source: str = ""
    verified: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {
            "level": self.level, "op_type": self.op_type, "message": self.message,
            "nodes": self.nodes, "count": self.count, "source": self.source, "verified": self.verified,
        }


def check_opset(opset: int) -> list[AtcOpFinding]:
    """Findings for the default-domain opset: warning above ``max_opset`` (17) or
    below ``min_opset`` (9); info when it differs from the recommended 11.
    Source: accuracy-profiling-atc.md §1.5 (ONNX 1.12.0 supported → opset ≤ 17)."""
    t = load_table()
    src = t["_sources"]["opset"]
    if opset > t["max_opset"]:
        return [AtcOpFinding("warning", "", f"opset {opset} is above {t['max_opset']}: Huawei's ONNX operator list "
                             f"supports ONNX 1.12.0 (opset <= 17); re-export with --opset {t['default_opset']} "
                             "unless an op needs a newer opset", source=src)]
    if opset < t["min_opset"]:
        return [AtcOpFinding("warning", "", f"opset {opset} is below {t['min_opset']}, older than any documented "
                             f"ATC ONNX parser support; re-export with --opset {t['default_opset']}", source=src)]
    return []


def check_ops(nodes: Iterable[tuple[str, str, str]]) -> list[AtcOpFinding]:
    """Check ``(domain, op_type, node_name)`` triples against the table.

    Returns one finding per op type: ``error`` for non-default domains (custom ops
    ATC cannot parse without a plugin), ``warning`` for op types in neither list
    and for ops with a trouble note (``info`` for notes about optimisation passes), ``info``
    for ops listed only for CANN 8.0.0.
    """
    by_type: dict[tuple[str, str], list[str]] = {}
    for domain, op_type, name in nodes:
        by_type.setdefault((domain or "", op_type), []).append(name)
    out: list[AtcOpFinding] = []
    src_lists = "hiascend ONNX operator lists (CANN 5.0.4, 8.0.0); see kb/data/atc_onnx_ops.json"
    for (domain, op_type), names in sorted(by_type.items()):
        shown = names[:5]
        if domain not in ("", "ai.onnx"):
            out.append(AtcOpFinding("error", op_type, f"custom-domain op '{domain}::{op_type}' cannot be parsed by ATC "
                                    "without a parser plugin (E16002 'No ONNX parser is registered')",
                                    shown, len(names), "accuracy-profiling-atc.md §1.6"))
            continue
        info = op_info(op_type)
        listed = (info or {}).get("listed_in", [])
        trouble = (info or {}).get("trouble")
        if not listed:
            msg = f"{op_type} is not in Huawei's ONNX operator lists (CANN 5.0.4 / 8.0.0): ATC will likely fail with " \
                  "E16002/EZ9010 'No parser is registered'; replace the op or check with 'atc --mode=3'"
            if trouble:
                msg += f" ({trouble['note']})"
            out.append(AtcOpFinding("warning", op_type, msg, shown, len(names), src_lists))
            continue
        if trouble:
            out.append(AtcOpFinding(trouble.get("severity", "warning"), op_type, f"{op_type}: {trouble['note']}", shown,
                                    len(names), trouble["source"], bool(trouble.get("verified"))))
        elif listed == ["cann-8.0.0"]:
            out.append(AtcOpFinding("info", op_type, f"{op_type} is listed for CANN 8.0.0 but not 5.0.4: needs a recent toolkit",
                                    shown, len(names), src_lists))
    return out
