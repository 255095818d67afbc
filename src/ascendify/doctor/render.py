"""Text rendering of a doctor report (JSON is ``Report.to_dict``)."""

from __future__ import annotations

from typing import List, Optional, Tuple

from ascendify.doctor.model import Report

TAGS = {"ok": " ok ", "warn": "WARN", "fail": "FAIL", "skipped": " -- "}
COLORS = {"ok": "green", "warn": "yellow", "fail": "red", "skipped": None}


def render_text(report: Report, color: bool = False, verbose: bool = False, strict: bool = False,
                width: Optional[int] = None) -> str:
    """Short report: header with versions, then one line per check; ``expected`` and
    ``fix`` lines for warn/fail (and for missing pieces).  Skipped checks without a
    fix are hidden unless ``verbose``.  ``width``: wrap every line to that many columns, the
    continuation lines indented under the text they continue (None: one line each)."""
    import click

    def tag(status: str) -> str:
        return f"[{TAGS[status]}]"

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
    lines: List[Tuple[str, str, int]] = [("", "ascendify doctor" + ("" if report.root == "/" else f" (root {report.root})")
                                          + ": " + " · ".join(parts), 4)]
    if not report.stack_present and not verbose:
        lines += _no_stack_lines(report, tag, strict)
        return _finish(lines, width, color)
    for n in report.notes:
        lines.append(("", n, 4))
    width_id = max((len(c.id) for c in report.checks), default=10)
    hidden = 0
    for c in report.checks:
        if c.status == "skipped" and not c.fix and not verbose:
            hidden += 1
            continue
        pad = " " * (7 + width_id)
        lines.append((f"{tag(c.status)} {c.id.ljust(width_id)}  ", c.found or c.title, len(pad) + 2))
        if c.status in ("warn", "fail") or verbose:
            if c.expected:
                lines.append((f"{pad}expected: ", c.expected, len(pad) + 10))
        if c.fix and (c.status != "ok" or verbose):
            lines.append((f"{pad}fix: ", c.fix, len(pad) + 5))
        if verbose and c.source:
            lines.append((f"{pad}source: ", c.source, len(pad) + 8))
    s = report.summary
    tail = f"{s['ok']} ok, {s['warn']} warn, {s['fail']} fail, {s['skipped']} skipped"
    if hidden:
        tail += f" ({hidden} skipped not shown; -v shows all)"
    lines.append(("", f"{tail} — exit {report.exit_code(strict)}", 4))
    return _finish(lines, width, color)


def _finish(lines: List[Tuple[str, str, int]], width: Optional[int], color: bool) -> str:
    """Each (lead, text, continuation indent) wrapped to ``width``: the lead kept as it is (the
    aligned columns), the text wrapped at spaces, its further lines indented under it (9 columns
    where that would leave under 40); then the status tags coloured (after wrapping: escape codes take no columns)."""
    import click

    from ascendify.termtable import wrap

    out: List[str] = []
    for lead, text, indent in lines:
        if width is None or len(lead) + len(text) <= width:
            out.append(lead + text)
            continue
        out.extend(wrap(text, width, lead, " " * (indent if width - indent >= 40 else min(9, width // 3))))
    if color:
        for status, t in TAGS.items():
            if COLORS[status]:
                styled = click.style(f"[{t}]", fg=COLORS[status], bold=status == "fail")
                out = [ln.replace(f"[{t}]", styled, 1) if ln.startswith(f"[{t}]") else ln for ln in out]
    return "\n".join(out)


PIECES = {"driver.version": "driver", "firmware.version": "firmware", "cann.toolkit": "CANN",
          "torch_npu.installed": "torch_npu", "devices.npu_smi": "devices"}


def _no_stack_lines(report: Report, tag, strict: bool) -> List[Tuple[str, str, int]]:
    """One line per missing piece with what to install; problems still shown.  Each line comes with
    the indent of its continuation lines."""
    out: List[Tuple[str, str, int]] = []
    out.extend(("", n, 4) for n in report.notes[:1])
    seen_fix = set()
    by_id = {c.id: c for c in report.checks}
    for c in [by_id[i] for i in PIECES if i in by_id]:
        if c.status in ("skipped", "fail"):
            fix = c.fix if c.fix not in seen_fix else None
            if c.fix:
                seen_fix.add(c.fix)
            what = (c.found or "").split(" (")[0]
            out.append(("", f"{tag(c.status)} {PIECES[c.id]}: {what}" + (f" — {fix}" if fix else ""), 9))
    for c in report.checks:
        if c.status in ("warn", "fail") and c.id not in PIECES:
            out.append(("", f"{tag(c.status)} {c.id}: {c.found}" + (f" — fix: {c.fix}" if c.fix else ""), 9))
    oks = [c.id for c in report.checks if c.status == "ok"]
    if oks:
        out.append(("", f"{tag('ok')} {', '.join(oks)}", 7))
    out.extend(("", n, 4) for n in report.notes[1:])
    out.append(("", f"no Ascend stack — exit {report.exit_code(strict)} (-v shows every check)", 4))
    return out
