"""Text rendering of a doctor report (JSON is ``Report.to_dict``)."""

from __future__ import annotations

from typing import List

from ascendify.doctor.model import Report

TAGS = {"ok": " ok ", "warn": "WARN", "fail": "FAIL", "skipped": " -- "}
COLORS = {"ok": "green", "warn": "yellow", "fail": "red", "skipped": None}


def render_text(report: Report, color: bool = False, verbose: bool = False, strict: bool = False) -> str:
    """Short report: header with versions, then one line per check; ``expected`` and
    ``fix`` lines for warn/fail (and for missing pieces).  Skipped checks without a
    fix are hidden unless ``verbose``."""
    import click

    def tag(status: str) -> str:
        t = f"[{TAGS[status]}]"
        return click.style(t, fg=COLORS[status], bold=status == "fail") if color and COLORS[status] else t

    f = report.facts
    parts = [f"Python {f['python'] or '?'}", f"torch {f['torch'] or '—'}", f"torch_npu {f['torch_npu'] or '—'}",
             f"CANN {f['cann'] or '—'}", f"driver {f['driver'] or '—'}"]
    if f.get("firmware"):
        parts.append(f"firmware {f['firmware']}")
    chip = report.chip
    if chip["detected"]:
        parts.append("chip " + ", ".join(chip["detected"]))
    elif chip["requested"]:
        parts.append(f"--chip {chip['requested']}")
    lines: List[str] = ["ascendify doctor" + ("" if report.root == "/" else f" (root {report.root})") + ": "
                        + " · ".join(parts)]
    if not report.stack_present and not verbose:
        return "\n".join(lines + _no_stack_lines(report, tag, strict))
    for n in report.notes:
        lines.append(n)
    width = max((len(c.id) for c in report.checks), default=10)
    hidden = 0
    for c in report.checks:
        if c.status == "skipped" and not c.fix and not verbose:
            hidden += 1
            continue
        lines.append(f"{tag(c.status)} {c.id.ljust(width)}  {c.found or c.title}")
        pad = " " * (7 + width)
        if c.status in ("warn", "fail") or verbose:
            if c.expected:
                lines.append(f"{pad}expected: {c.expected}")
        if c.fix and (c.status != "ok" or verbose):
            lines.append(f"{pad}fix: {c.fix}")
        if verbose and c.source:
            lines.append(f"{pad}source: {c.source}")
    s = report.summary
    tail = f"{s['ok']} ok, {s['warn']} warn, {s['fail']} fail, {s['skipped']} skipped"
    if hidden:
        tail += f" ({hidden} skipped not shown; -v shows all)"
    lines.append(f"{tail} — exit {report.exit_code(strict)}")
    return "\n".join(lines)


PIECES = {"driver.version": "driver", "firmware.version": "firmware", "cann.toolkit": "CANN",
          "torch_npu.installed": "torch_npu", "devices.npu_smi": "devices"}


def _no_stack_lines(report: Report, tag, strict: bool) -> List[str]:
    """One line per missing piece with what to install; problems still shown."""
    out: List[str] = []
    out.extend(report.notes[:1])
    seen_fix = set()
    by_id = {c.id: c for c in report.checks}
    for c in [by_id[i] for i in PIECES if i in by_id]:
        if c.status in ("skipped", "fail"):
            fix = c.fix if c.fix not in seen_fix else None
            if c.fix:
                seen_fix.add(c.fix)
            what = (c.found or "").split(" (")[0]
            out.append(f"{tag(c.status)} {PIECES[c.id]}: {what}" + (f" — {fix}" if fix else ""))
    for c in report.checks:
        if c.status in ("warn", "fail") and c.id not in PIECES:
            out.append(f"{tag(c.status)} {c.id}: {c.found}" + (f" — fix: {c.fix}" if c.fix else ""))
    oks = [c.id for c in report.checks if c.status == "ok"]
    if oks:
        out.append(f"{tag('ok')} {', '.join(oks)}")
    out.extend(report.notes[1:])
    out.append(f"no Ascend stack — exit {report.exit_code(strict)} (-v shows every check)")
    return out
