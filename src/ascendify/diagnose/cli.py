"""``ascendify diagnose LOG...``: text or JSON report; exit 1 when a known error was found."""

from __future__ import annotations

import json
import textwrap
from typing import Optional

import click

from ascendify.diagnose.engine import Finding, Report
from ascendify.diagnose.engine import diagnose as run_diagnose
from ascendify.diagnose.rules import rule_info
from ascendify.fsutil import atomic_write

_WRAP = 100


def _wrap(label: str, text: str) -> list:
    head = f"   {label:<9}"
    return textwrap.wrap(text, _WRAP, initial_indent=head, subsequent_indent=" " * len(head)) or [head]


def _where(f: Finding) -> str:
    parts = []
    ranks = sorted(f.ranks)
    if ranks:
        parts.append(("rank " if len(ranks) == 1 else "ranks ") + ",".join(map(str, ranks[:8])) + ("…" if len(ranks) > 8 else ""))
    if f.count > 1:
        parts.append(f"×{f.count}")
    return f" ({', '.join(parts)})" if parts else ""


def render_text(report: Report, max_findings: Optional[int] = None) -> str:
    d = report.to_dict()["summary"]
    out = []
    shown = report.findings if max_findings is None else report.findings[:max_findings]
    if not report.findings:
        out.append(f"No known error in {d['files']} file(s), {d['lines']:,} line(s).")
    else:
        out.append(
            f"{d['errors']} error finding(s), {d['warnings']} warning(s) in {d['files']} file(s), {d['lines']:,} line(s)."
        )
        fe = report.first_error()
        if fe is not None:
            e = fe.evidence[0]
            when = f" at {e.to_dict()['time']}" if e.time is not None else ""
            rank = f" on rank {e.rank}" if e.rank is not None else ""
            out.append(f"First error{' in time' if when else ''}{rank}{when}: {e.file}:{e.line} ({fe.title}).")
        out.append("")
    for i, f in enumerate(shown, 1):
        tag = "likely root cause" if i == 1 and f.severity == "error" else f.role
        out.append(f"{i}. [{f.severity}] {f.title} — {tag}{_where(f)}")
        for e in f.evidence:
            rk = f" [rank {e.rank}]" if e.rank is not None else ""
            text = e.text if len(e.text) <= 160 else e.text[:157] + "..."
            out.append(f"   {e.file}:{e.line}{rk}: {text}")
        if f.count > len(f.evidence):
            out.append(f"   … {f.count - len(f.evidence)} more line(s)")
        if f.frame:
            out.append(f"   {'code':<9}{f.frame['path']}:{f.frame['line']} in {f.frame['function']}")
        if f.details.get("explain"):
            out.append(f"   {'memory':<9}{f.details['verdict']}")
            for line in f.details["explain"]:
                out.append(f"   {'':<9}{line}")
        elif f.details:
            out.append(f"   {'details':<9}" + ", ".join(f"{k}={v}" for k, v in f.details.items()))
        out += _wrap("cause", f.cause)
        out += _wrap("fix", f.fix)
        out += _wrap("next", f.next_step)
        info = rule_info(f.rules)
        if info:
            names = ", ".join(f"{r['code']} ({r['name']})" for r in info)
            out += _wrap("scan", f"{names}: `ascendify scan` finds this cause in the code.")
        if f.consequence_of:
            out += _wrap("note", f"probably a consequence of {f.consequence_of} (listed above).")
        if not f.verified:
            out += _wrap("note", "unverified: the message text of this signature is not confirmed by a cited source.")
        out.append("")
    if max_findings is not None and len(report.findings) > max_findings:
        out.append(f"… {len(report.findings) - max_findings} more finding(s); use --max 0 for all.")
    for n in report.notes:
        out.append(f"note: {n}")
    return "\n".join(out).rstrip() + "\n"


@click.command("diagnose", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("logs", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", help="Output format.")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), default=None, help="Write the report here instead of stdout.")
@click.option("--max", "max_findings", type=click.IntRange(0), default=20, show_default=True, help="Text: show at most this many findings (0 = all).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "never"]), default="error", show_default=True,
              help="Exit 1 when a finding at or above this severity is found.")
def diagnose(logs, fmt, output_file, max_findings, fail_on) -> int:
    """Find the cause and fix of errors in NPU logs.

    LOGS are log files (also .gz), folders of rank logs or CANN plogs
    ($HOME/ascend/log/debug/plog), or '-' for stdin.  Findings are ranked with
    the likely root cause first (the first failing rank, the first error in
    time); each gives evidence lines, cause, fix, the next diagnostic step and
    the `ascendify scan` rule that finds the cause in code.
    """
    report = run_diagnose(tuple(logs))
    if fmt == "json":
        text = json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
    else:
        text = render_text(report, None if max_findings == 0 else max_findings)
    if output_file:
        atomic_write(output_file, text.encode("utf-8"))
    else:
        click.echo(text, nl=False)
    if fail_on == "never":
        return 0
    levels = ("error",) if fail_on == "error" else ("error", "warning")
    return 1 if any(f.severity in levels for f in report.findings) else 0
