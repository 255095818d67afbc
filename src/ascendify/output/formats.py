"""Render findings as text (ruff/flake8 shape), JSON, SARIF 2.1.0 or CSV."""

from __future__ import annotations

import csv
import io
from typing import Any, Optional

import click

from ascendify import __version__
from ascendify.output.escape import json_text, text_safe, uri_path
from ascendify.diagnostics import Finding

FORMATS = ("text", "json", "sarif", "csv")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {"error": "error", "silent": "error", "warning": "warning", "info": "note"}
_COLOURS = {"error": "red", "silent": "magenta", "warning": "yellow", "info": "cyan"}


def location(f: Finding) -> str:
    """``path:line:col`` (col 1-based); notebooks: ``path:cell N:line:col``.
    Bytes of the path that are not UTF-8 are shown as ``\\xNN``."""
    path = text_safe(f.path)
    if f.cell is not None:
        return f"{path}:cell {f.cell}:{f.cell_line}:{f.col + 1}"
    return f"{path}:{f.line}:{f.col + 1}"


def text_line(f: Finding, colour: bool = False) -> str:
    """One finding as ``path:line:col: CODE [*] message`` (``[*]`` = auto-fixable)."""
    mark = " [*]" if f.fix is not None and f.fix.safe else (" [-]" if f.fix is not None else "")
    if not colour:
        return f"{location(f)}: {f.code}{mark} {f.full_message}"
    return (
        f"{click.style(location(f), bold=True)}: "
        f"{click.style(f.code, fg=_COLOURS.get(f.severity, 'white'), bold=True)}{mark} {f.full_message}"
    )


def render_text(findings: list[Finding], summary: dict[str, Any], colour: bool = False, show_summary: bool = True) -> str:
    out = [text_line(f, colour) for f in findings]
    if show_summary:
        if findings:
            out.append("")
        out.extend(summary_text(summary))
    return "\n".join(out) + "\n"


def summary_text(s: dict[str, Any]) -> list[str]:
    if not s["findings"]:
        if not s["files_scanned"]:
            return ["No files scanned."]
        return [f"All clear: {s['files_scanned']} file(s) scanned, no findings."]
    sev = ", ".join(f"{n} {k}" for k, n in s["by_severity"].items() if n)
    cat = ", ".join(f"{k} {n}" for k, n in s["by_category"].items())
    lines = [
        f"Found {s['findings']} finding(s) in {sum(1 for f in s['files'] if f['findings'])} of {s['files_scanned']} file(s): {sev}.",
        f"By category: {cat}.",
        s.get("fixed_text") or f"Auto-fixable: {s['fixable']} ({s['fixable_share']:.0%}).",
    ]
    from ascendify.output.summary import EFFORT_ORDER, effort_top

    top, rest = effort_top(s["files"])
    n_rest = sum(rest.values())
    lines.append(f"Effort per file (the {len(top)} with the most work of {len(top) + n_rest}):" if n_rest else "Effort per file:")
    for f in top:
        lines.append(f"  {f['effort']:<6} {text_safe(f['path'])}: {f['effort_reason']}")
    if n_rest:
        grades = ", ".join(f"{rest[e]} {e}" for e in sorted(rest, key=lambda e: EFFORT_ORDER.get(e, 9)))
        lines.append(f"  … {n_rest} more file(s): {grades} (`--format json` lists every file).")
    return lines


def render_json(findings: list[Finding], summary: dict[str, Any], settings: Optional[dict] = None) -> str:
    doc = {
        "tool": "ascendify",
        "version": __version__,
        "command": "scan",
        "settings": settings or {},
        "findings": [f.to_dict() for f in findings],
        "summary": summary,
    }
    return json_text(doc) + "\n"  # file-name bytes that are not UTF-8 as \udcXX escapes


def render_sarif(findings: list[Finding], properties: Optional[dict] = None, *, rules: dict) -> str:
    """SARIF 2.1.0 log with one run; ``rules`` (code → Rule, the registry's) carry their pages as help text."""
    used = sorted({f.code for f in findings})
    index = {c: i for i, c in enumerate(used)}
    driver_rules = []
    for code in used:
        r = rules[code]
        driver_rules.append(
            {
                "id": code,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.why.strip()},
                "help": {"text": f"{r.why.strip()}\n\nFix: {r.fix.strip()}\n\nSource: {r.source.strip()}",
                         "markdown": rule_markdown(r)},
                "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity]},
                "properties": {"category": r.category, "severity": r.severity, "tags": [r.category]},
            }
        )
    results = []
    for f in findings:
        if f.cell is not None:  # a notebook: the line of that source line inside the .ipynb JSON (cell and line below)
            at = f.json_line or 1
            region = {"startLine": at, "endLine": at}
        else:
            region = {"startLine": f.line, "startColumn": f.col + 1, "endLine": f.end_line, "endColumn": f.end_col + 1}
        res: dict[str, Any] = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.full_message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri_path(f.path), "uriBaseId": "%SRCROOT%"}, "region": region}}],
            "properties": {"severity": f.severity, "category": f.category, "fixable": f.fix is not None},
        }
        if f.notes:  # the policy's notes, also in the message text
            res["properties"]["notes"] = [{"text": n.text, "kind": n.kind} for n in f.notes]
        if f.cell is not None:
            res["properties"]["cell"] = f.cell
            res["properties"]["cellLine"] = f.cell_line
            res["properties"]["cellColumn"] = f.col + 1
        if f.related:  # cross-file findings: the helper's findings, the constant's definition
            res["relatedLocations"] = [_related_location(i, r) for i, r in enumerate(f.related)]
        results.append(res)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "ascendify", "version": __version__, "semanticVersion": __version__,
                                    "informationUri": "https://github.com/ascendify/ascendify", "rules": driver_rules}},
                "originalUriBaseIds": {"%SRCROOT%": {"uri": "./"}},
                "results": results,
                "columnKind": "unicodeCodePoints",
            }
        ],
    }
    if properties:
        log["runs"][0]["properties"] = properties
    return json_text(log) + "\n"


def _related_location(i: int, r: dict) -> dict:
    """A related location in SARIF; one in a notebook (``cell`` set) as the results there: its region at
    the line of that source line inside the ``.ipynb`` JSON, cell and line in the cell in its properties."""
    if r.get("cell") is not None:
        at = r.get("json_line") or 1
        region: dict = {"startLine": at, "endLine": at}
    else:
        region = {"startLine": r["line"], "startColumn": r["col"] + 1}
    loc: dict[str, Any] = {"id": i, "physicalLocation": {"artifactLocation": {"uri": uri_path(r["path"]), "uriBaseId": "%SRCROOT%"},
                                                         "region": region},
                           "message": {"text": r["message"]}}
    if r.get("cell") is not None:
        loc["properties"] = {"cell": r["cell"], "cellLine": r["line"], "cellColumn": r["col"] + 1}
    return loc


CSV_HEADER = ("file", "cell", "start_line", "end_line", "code", "severity", "operation", "message")


def render_csv(findings: list[Finding]) -> str:
    """The change list: one row per finding; ``operation`` is the fix's, or ``manual``.  In a notebook
    ``cell`` is the code-cell number and the lines are lines of that cell (empty ``cell`` for .py files).
    Bytes of a path that are not UTF-8 are written as ``\\xNN``."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for f in findings:
        op = f.fix.operation if f.fix is not None else "manual"
        start = f.cell_line if f.cell is not None and f.cell_line is not None else f.line
        w.writerow((text_safe(f.path), f.cell if f.cell is not None else "", start, start + f.end_line - f.line, f.code,
                    f.severity, op, text_safe(f.full_message)))
    return buf.getvalue()


def rule_markdown(r) -> str:
    """A rule's page in Markdown (also used by ``ascendify rule CODE --format markdown``)."""
    fixable = {"safe": "Yes (safe fix).", "unsafe": "Yes, with `--unsafe-fixes` (review the change).", "": "No; change it by hand."}[r.fixable]
    parts = [
        f"# {r.code} {r.name}",
        "",
        f"**Category:** {r.category} · **Severity:** {r.severity} (default; some findings adjust it to the target torch_npu release, the chip or the code around them) · **Auto-fix:** {fixable}",
        "",
        f"## What it finds\n\n{r.summary.strip()}",
        f"## Why it matters on NPU\n\n{r.why.strip()}",
        f"## Example\n\n```python\n{r.example.strip()}\n```",
    ]
    if r.fixed_example.strip():
        parts.append(f"Fixed (`--target npu`):\n\n```python\n{r.fixed_example.strip()}\n```")
    parts.append(f"## Fix\n\n{r.fix.strip()}")
    src = r.source.strip()
    if not r.verified:
        src += "\n\n*Unverified: no public source confirms this NPU behaviour yet; treat it as advice.*"
    parts.append(f"## Source\n\n{src}")
    return "\n\n".join(parts) + "\n"
