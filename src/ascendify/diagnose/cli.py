"""``ascendify diagnose LOG...``: text or JSON report; exit 1 when a known error was found."""

from __future__ import annotations

import json
import textwrap
from typing import Optional

import click

from ascendify.diagnose.engine import Finding, Report, _iso
from ascendify.diagnose.known_issues import CLOSE_CONFIDENCE
from ascendify.diagnose.engine import diagnose as run_diagnose
from ascendify.diagnose.rules import rule_info
from ascendify.diagnose.structure import is_user_frame
from ascendify.options import chip_option, emit, envelope, fail_on_option, report_options, torch_npu_option

_WRAP = 100


def _width() -> int:
    """Lines of the text report: :data:`_WRAP` columns, fewer when ``$COLUMNS`` / the terminal is narrower."""
    from ascendify.termtable import report_width

    return max(40, min(_WRAP, report_width()))


def _wrap(label: str, text: str) -> list:
    head = f"   {label:<9}"
    # a URL or path longer than the line stays whole (a link cut in two cannot be followed)
    return textwrap.wrap(text, _width(), initial_indent=head, subsequent_indent=" " * len(head), break_long_words=False,
                         break_on_hyphens=False) or [head]


def _line(text: str, indent: str = "   ") -> list:
    """``text`` wrapped to the report's width, continuation lines indented by ``indent``."""
    return textwrap.wrap(text, _width(), subsequent_indent=indent, break_long_words=False, break_on_hyphens=False) or [text]


def _where(f: Finding) -> str:
    parts = []
    ranks = sorted(f.ranks)
    if ranks:
        parts.append(("rank " if len(ranks) == 1 else "ranks ") + ",".join(map(str, ranks[:8])) + ("…" if len(ranks) > 8 else ""))
    if f.count > 1:
        parts.append(f"×{f.count}")
    return f" ({', '.join(parts)})" if parts else ""


def _short_time(t: float, decimals: int = 0) -> str:
    """``2026-05-01 10:00:00`` (``.123`` with ``decimals=3``), or ``05-01 10:00:00`` without a known year."""
    iso = _iso(t).replace("T", " ")
    head, _, frac = iso.partition(".")
    return head + ("." + frac[:decimals] if decimals and frac else "")


def headline(report: Report) -> str:
    """One short line: the most likely root cause, where and when it happened."""
    if not report.findings:
        return "No known error found."
    f = report.findings[0]
    if f.severity != "error":
        return f"No error found; most important warning: {f.title}."
    bits = []
    ff = report.first_failure()
    ranks = sorted(f.ranks)
    if ranks:
        bits.append(("rank " if len(ranks) == 1 else "ranks ") + ",".join(map(str, ranks[:8])) + ("…" if len(ranks) > 8 else ""))
    if f.first_time is not None:
        bits.append(_short_time(f.first_time))
    where = f" ({', '.join(bits)})" if bits else ""
    if f.role != "cause":  # only timeouts / wrappers: the failing rank's log is not among the inputs
        return (f"No root cause in these logs; first symptom: {f.title}{where}. "
                "Add the logs of the other ranks (or the plog) to find the rank that failed.")
    line = f"Root cause: {f.title}{where}"
    if ff is not None and ff is not f and ff.first_time is not None:
        line += f"; first failure in time: {ff.title}"
    return line + "."


def _timeline(report: Report) -> Optional[str]:
    """``Rank 2 failed first (…); ranks 0,1,3 followed (consequences).`` for a multi-rank report."""
    ff = report.first_failure()
    if ff is None or not ff.ranks:
        return None
    label = ff.label()
    after = set()
    for f in report.findings:
        if f.consequence_of == label:
            after |= f.ranks
    after -= ff.ranks
    ranks = sorted(ff.ranks)
    when = f" at {_short_time(ff.first_time, 3)}" if ff.first_time is not None else ""
    out = f"{'Rank' if len(ranks) == 1 else 'Ranks'} {','.join(map(str, ranks[:8]))} failed first{when} ({ff.title})"
    if after:
        out += f"; rank(s) {','.join(map(str, sorted(after)[:16]))} failed after it (consequences)"
    return out + "."


_INTERNAL_DETAILS = frozenset({"context_advice", "wrapped_codes", "chain", "advice", "explain", "unit", "verdict",
                               "cached_unused", "outside", "component"})
"""Details printed elsewhere (fix, note, wraps, the memory line) or only for JSON."""
_OOM_NUMBERS = ("requested", "total", "allocated", "active", "free", "allowed", "reserved", "device")


def _value_text(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(_value_text(x) for x in v)
    return str(v)


def details_text(details: dict) -> str:
    """A finding's extra fields in words for the text report (``first step 120; loss scale 1``),
    without those printed on their own lines or kept for JSON; "" when nothing is left."""
    skip = set(_INTERNAL_DETAILS) | (set(_OOM_NUMBERS) if "verdict" in details else set())
    return "; ".join(f"{k.replace('_', ' ')} {_value_text(v)}" for k, v in details.items()
                     if k not in skip and v not in (None, "", [], {}))


def oom_line(d: dict) -> str:
    """``real shortage: requested 2.00 GiB on NPU 0 (60.00 GiB total capacity)`` from an OOM
    finding's details (numbers in MiB, ``diagnose.oom``)."""
    from ascendify.diagnose.oom import fmt

    text = str(d["verdict"])
    if isinstance(d.get("requested"), (int, float)):
        text += f": requested {fmt(d['requested'])}"
        if d.get("device") is not None:
            text += f" on NPU {d['device']}"
        have = [f"{fmt(d[k])} {label}" for k, label in (("total", "total capacity"), ("allocated", "allocated"),
                                                       ("reserved", "reserved"), ("free", "free"))
                if isinstance(d.get(k), (int, float))]
        if have:
            text += f" ({', '.join(have)})"
    return text


def render_text(report: Report, max_findings: Optional[int] = None) -> str:
    text = _render_incidents(report, max_findings) if report.incidents else _render_one(report, max_findings)
    width = _width()
    if width >= _WRAP:
        return text
    # a terminal narrower than the report's lines ($COLUMNS=80): the summary lines above the findings wrap too
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        lead = len(line) - len(line.lstrip(" "))
        out += textwrap.wrap(line, width, initial_indent=" " * lead, subsequent_indent=" " * (lead + 3 if not lead else lead),
                             break_long_words=False, break_on_hyphens=False) or [line]
    return "\n".join(out)


def _files_label(rep: Report) -> str:
    paths = [s.path for s in rep.files]
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _render_incidents(report: Report, max_findings: Optional[int]) -> str:
    """Inputs that hold separate incidents (other job folders, time spans hours apart): one section each."""
    n = len(report.incidents)
    out = [f"{n} separate incidents in these logs (different job folders, more than an hour apart); each is diagnosed on its own."]
    for i, rep in enumerate(report.incidents, 1):
        out.append(f"Incident {i}: {headline(rep)}  [{_files_label(rep)}]")
    out.append("")
    for i, rep in enumerate(report.incidents, 1):
        out.append(f"=== Incident {i} of {n}: {_files_label(rep)} ===")
        body = _render_one(Report(rep.findings, rep.files, [], rep.context), max_findings)
        out.append(body.rstrip())
        out.append("")
    for note in report.notes:
        out.append(f"note: {note}")
    return "\n".join(out).rstrip() + "\n"


def _render_one(report: Report, max_findings: Optional[int] = None) -> str:
    d = report.to_dict()["summary"]
    out = [headline(report)]
    shown = report.findings if max_findings is None else report.findings[:max_findings]
    if not report.findings:
        out.append(f"No known error in {d['files']} file(s), {d['lines']:,} line(s).")
    else:
        out.append(
            f"{d['errors']} error finding(s), {d['warnings']} warning(s) in {d['files']} file(s), {d['lines']:,} line(s)."
        )
        tl = _timeline(report)
        if tl and len({r for f in report.findings for r in f.ranks}) > 1:
            out.append(tl)
        lr = report.context.get("launcher_first_rank")
        if lr:
            out.append(f"torch elastic names rank {lr['value']} as the first observed failure ({lr['file']}:{lr['line']}).")
        fe = report.first_error()
        if fe is not None and fe.first_time is not None:  # without times the ranking, not the line order, decides
            e = fe.evidence[0]
            when = f" at {e.to_dict()['time']}" if e.time is not None else ""
            rank = f" on rank {e.rank}" if e.rank is not None else ""
            out.append(f"First error{' in time' if when else ''}{rank}{when}: {e.file}:{e.line} ({fe.title}).")
        if report.context:
            parts = []
            for k, label in (("chip", "chip"), ("torch_npu", "torch_npu"), ("torch", "torch"), ("cann", "CANN"),
                             ("framework", "framework")):
                v = report.context.get(k)
                if v:
                    src = "--" + k.replace("_", "-") if v.get("from") == "option" else f"{v['file']}:{v['line']}"
                    vers = " ".join(f"{a} {b}" for a, b in (v.get("versions") or {}).items())
                    parts.append(f"{label} {v['value']}{' (' + vers + ')' if vers else ''} ({src})")
            out.append("Context: " + "; ".join(parts) + ".")
        out.append("")
    for i, f in enumerate(shown, 1):
        tag = ("likely root cause" if f.role == "cause" else "first symptom") if i == 1 and f.severity == "error" else f.role
        out += _line(f"{i}. [{f.severity}] {f.title} — {tag}{_where(f)}, confidence {f.confidence:.2f}")
        for e in f.evidence:
            rk = f" [rank {e.rank}]" if e.rank is not None else ""
            where = f"   {e.file}:{e.line}{rk}:"
            room = _width() - len(where) - 1
            if room < 40 and _width() < _WRAP:  # a narrow terminal, a long path: the location on its own line, the text under it
                out.append(where)
                room = _width() - 6
                text = e.text if len(e.text) <= room else e.text[:room - 3] + "..."
                out.append(f"      {text}")
                continue
            room = max(40, room)
            text = e.text if len(e.text) <= room else e.text[:room - 3] + "..."
            out.append(f"   {e.file}:{e.line}{rk}: {text}")
        if f.count > len(f.evidence):
            out.append(f"   … {f.count - len(f.evidence)} more line(s)")
        if f.exception and f.generic is False:
            out.append(f"   {'raised':<9}{f.exception['type']}")
        if f.frame:
            label = "code" if is_user_frame(f.frame["path"]) else "library"  # no frame of the user's own code in the traceback
            out.append(f"   {label:<9}{f.frame['path']}:{f.frame['line']} in {f.frame['function']}")
        comp = f.details.get("component")
        if comp:
            fr = comp["frame"]
            out += _wrap("in", f"{comp['project']}" + (f": {comp['feature']}" if comp["feature"] != comp["project"] else "")
                         + f" ({fr['path'].rsplit('/', 1)[-1]}:{fr['line']} in {fr['function']})")
        if f.details.get("verdict"):
            out.append(f"   {'memory':<9}{oom_line(f.details)}")
            for line in f.details.get("explain") or ():
                out.append(f"   {'':<9}{line}")
        else:
            shown_details = details_text(f.details)
            if shown_details:
                out += _wrap("details", shown_details)
        if f.reason and f.reason not in f.title:
            out += _wrap("reason", f.reason)
        if f.known_issue:
            k = f.known_issue
            close = k["confidence"] >= CLOSE_CONFIDENCE
            out += _wrap("known" if close else "closest", f"{k['id']} (match {k['confidence']:.2f}"
                         + ("" if close else ", not certain") + f"): {k['title']} <{k['url']}>"
                         + (f" {k['fix_note']}" if k.get("fix_note") else ""))
        if f.details.get("wrapped_codes"):
            out.append(f"   {'wraps':<9}" + ", ".join(f.details["wrapped_codes"]) + " (generic codes printed with it)")
        out += _wrap("cause", f.cause)
        out += _wrap("fix", f.fix)
        out += _wrap("next", f.next_step)
        info = rule_info(f.rules)
        if info:
            target = f.scan_target()
            names = ", ".join(f"{r['code']} ({r['name']})" for r in info)
            codes = ",".join(r["code"] for r in info)
            out += _wrap("scan", f"{names} finds this cause in the code: run `ascendify scan {target} --select {codes}`.")
        if f.details.get("chain"):
            out += _wrap("note", f.details["chain"] + ".")
        elif f.consequence_of:
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
@click.argument("logs", nargs=-1, required=False)
@click.option("--list", "list_catalogue", is_flag=True,
              help="List the catalogue of known errors (id, family, title, source) and exit; honours --format.")
@report_options()
@chip_option("The chip the log comes from (soc_version such as Ascend910B3, or a family such as 910A); default: what the log shows.")
@torch_npu_option("The torch_npu release the log comes from, e.g. 2.1.0.post3; default: what the log shows.")
@click.option("--max", "max_findings", type=click.IntRange(0), default=20, show_default=True, help="Text: show at most this many findings (0 = all).")
@fail_on_option(["error", "warning", "never"], "error")
def diagnose(logs, list_catalogue, fmt, output_file, chip, torch_npu, max_findings, fail_on) -> int:
    """Find the cause and fix of errors in NPU logs.

    LOGS are log files (also .gz), folders of rank logs or CANN plogs
    ($HOME/ascend/log/debug/plog), or '-' for stdin.  Findings are ranked with
    the likely root cause first (the first failing rank, the first error in
    time); each gives evidence lines, cause, fix, the next diagnostic step and
    the `ascendify scan` rule that finds the cause in code.
    """
    if list_catalogue:
        from ascendify.diagnose.signatures import catalogue_rows, render_catalogue_list

        if fmt == "json":
            emit(json.dumps(envelope("diagnose", {"catalogue": catalogue_rows()}), indent=2, ensure_ascii=False) + "\n", output_file)
        else:
            emit(render_catalogue_list(), output_file)
        return 0
    if not logs:
        raise click.UsageError("give LOGS (files, folders, '-') or --list")
    report = run_diagnose(tuple(logs), chip=chip, torch_npu=torch_npu)
    if fmt == "json":
        text = json.dumps(envelope("diagnose", report.to_dict()), indent=2, ensure_ascii=False) + "\n"
    else:
        text = render_text(report, None if max_findings == 0 else max_findings)
    emit(text, output_file)
    if fail_on == "never":
        return 0
    levels = ("error",) if fail_on == "error" else ("error", "warning")
    return 1 if any(f.severity in levels for f in report.findings) else 0
