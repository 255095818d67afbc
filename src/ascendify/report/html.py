"""Render ``report.json`` as a static HTML site: index, one page per file, rule pages.

Everything from the user's project (code, paths, messages) is escaped by
Jinja2's autoescaping; the only unescaped markup is what this module builds
(the SVG chart, whose labels are escaped here) and rule pages rendered from
ascendify's own Markdown with raw HTML disabled.
"""

from __future__ import annotations

import json
import os
import re
from importlib import resources
from typing import Any, Optional

from markupsafe import Markup, escape

from ascendify.fsutil import atomic_write
from ascendify.rules.page import rule_page_markdown
from ascendify.rules.registry import load_rules

SECTION_ORDER = ("doctor", "probe", "fit", "diagnose", "profile")
SECTION_HINT = {
    "doctor": "Run `ascendify doctor --format json > doctor.json` on the Ascend host and add it with `ascendify report --include doctor.json`.",
    "probe": "Run `ascendify probe pkg.module:factory --input ... --format json > probe.json` (or pass --probe to migrate).",
    "diagnose": "Run `ascendify diagnose LOGS --format json > diagnose.json` after a failing run.",
    "profile": "Run `ascendify profile PROFILER_DIR --format json > profile.json` after a profiled run.",
    "fit": "Name the model in pyproject.toml ([tool.ascendify.fit] factory and inputs, docs/fit.md) and migrate predicts "
           "whether one training step fits the chip's memory; or run `ascendify fit pkg.module:factory --input ... --chip SOC "
           "--format json > fit.json` and add it with --include.",
}
SEV_ORDER = ("error", "silent", "warning", "info")
SEV_COLOUR = {"error": "#c0262d", "silent": "#8e3fb0", "warning": "#b7791f", "info": "#2b6cb0"}


def ticks(text: str) -> Markup:
    """Escape ``text``, then show `backticked` spans as <code> (messages use Markdown ticks)."""
    return Markup(re.sub(r"`([^`\n]+)`", r"<code>\1</code>", str(escape(text))))


def _env():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ascendify.report", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["ticks"] = ticks
    env.globals["profile_view"] = profile_view
    return env


def profile_view(sec: dict) -> dict:
    """What the report's profile section shows of an ``ascendify profile --format json`` result, as
    the text report does: the device-time line, the top operators in one time unit, AI_CPU
    operators with why and what to change, the step-time split, the suggestions, notes."""
    from ascendify.profile.analyze import times
    from ascendify.profile.cli import _in, _unit

    files = sec.get("files") if isinstance(sec.get("files"), dict) else {}
    out: dict = {"output": sec.get("output") or sec.get("dir") or "", "summary": "", "top": [], "unit": "µs", "aicpu": [],
                 "step": "", "suggestions": [], "notes": list(sec.get("notes") or []),
                 "missing": [name for name, p in files.items() if not p]}
    k = sec.get("kernels") if isinstance(sec.get("kernels"), dict) else None
    if k:
        total, hccl, compute = times(k.get("total_us"), k.get("hccl_us"), k.get("compute_us"))  # one unit, as the text report
        out["summary"] = (f"{k.get('rows', 0):,} device tasks, {total} summed; communication (HCCL) "
                          f"{hccl} = {k.get('hccl_share') or 0:.1%}, compute {compute}.")
        top = [r for r in k.get("top_ops") or [] if isinstance(r, dict)]
        u = _unit([r.get("total_us") for r in top])
        out["unit"] = u[0]
        out["top"] = [{"op": r.get("op_type", ""), "core": ", ".join(r.get("core_types") or []), "count": r.get("count", ""),
                       "total": _in(r.get("total_us"), u), "avg": _in(r.get("avg_us"), u),
                       "share": f"{r.get('share') or 0:.1%}"} for r in top]
        aicpu = [a for a in k.get("aicpu") or [] if isinstance(a, dict)]
        out["aicpu"] = [{"op": a.get("op_type", ""),
                         "dtypes": (f"{a.get('input_dtypes') or '?'} → {a.get('output_dtypes') or '?'}"
                                    if a.get("input_dtypes") or a.get("output_dtypes") else ""),
                         "count": a.get("count", ""), "total": t,
                         "why": a.get("reason") or "no dtype rule explains it", "change": a.get("suggestion") or ""}
                        for a, t in zip(aicpu, times(*[a.get("total_us") for a in aicpu]))]  # one unit for the list
    st = sec.get("step_time") if isinstance(sec.get("step_time"), dict) else None
    if st and st.get("shares"):
        sh = st["shares"]
        out["step"] = (f"Step time ({st.get('source', '')}, mean of {st.get('steps_used', '?')} step(s)): {times(st.get('step_us'))[0]}: "
                       f"compute {sh.get('computing', 0):.0%}, communication not overlapped {sh.get('communication_not_overlapped', 0):.0%}, "
                       f"free {sh.get('free', 0):.0%}" + (f"; {st['bound']}-bound" if st.get("bound") else "") + ".")
    out["suggestions"] = [s for s in sec.get("suggestions") or [] if isinstance(s, dict)]
    return out


def category_chart(findings: list[dict]) -> Markup:
    """Horizontal stacked bars: findings per category, split by severity (inline SVG)."""
    cats: dict[str, dict[str, int]] = {}
    for d in findings:
        cats.setdefault(d["category"], {s: 0 for s in SEV_ORDER})[d["severity"]] += 1
    if not cats:
        return Markup('<p class="muted">No findings.</p>')
    rows = sorted(cats.items(), key=lambda kv: -sum(kv[1].values()))
    top = max(sum(v.values()) for _, v in rows)
    bar_w, label_w, row_h = 560, 150, 24
    height = row_h * len(rows) + 40
    parts = [f'<div class="chart"><svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="findings by category and severity" '
             f'width="{label_w + bar_w + 60}" height="{height}" viewBox="0 0 {label_w + bar_w + 60} {height}">']
    for i, (cat, sev) in enumerate(rows):
        y = i * row_h + 4
        parts.append(f'<text x="{label_w - 8}" y="{y + 15}" text-anchor="end">{escape(cat)}</text>')
        x = label_w
        for s in SEV_ORDER:
            n = sev[s]
            if not n:
                continue
            w = max(2, round(bar_w * n / top))
            parts.append(f'<rect x="{x}" y="{y}" width="{w}" height="{row_h - 6}" fill="{SEV_COLOUR[s]}"><title>{escape(cat)}: {n} {s}</title></rect>')
            x += w
        parts.append(f'<text x="{x + 6}" y="{y + 15}">{sum(sev.values())}</text>')
    ly = len(rows) * row_h + 22
    lx = label_w
    for s in SEV_ORDER:
        parts.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{SEV_COLOUR[s]}"/><text x="{lx + 16}" y="{ly}">{s}</text>')
        lx += 90
    parts.append("</svg></div>")
    return Markup("".join(parts))


def _markdown(text: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).render(text)


_CELL_MARK = re.compile(r"^# %% \[ascendify cell \d+\]$")


def _read_source(rel: str, path_base: str) -> Optional[list[tuple]]:
    """The file's lines as ``(line, shown number, text, cell header or None)``.

    ``line`` is the line the scan reports (for notebooks, the line of the
    module the code cells are joined into); notebooks show each code cell
    under a "Cell N" header, numbered from 1 as Jupyter does, magics as written.
    """
    from ascendify.scan.source import CODE_MAGIC, MAGIC_PREFIX, SourceFile, read_source, unmask_line

    for cand in (os.path.join(path_base, rel), rel):
        if os.path.isfile(cand):
            src = read_source(cand)
            if not isinstance(src, SourceFile):
                return None
            out, cell, k = [], 0, 0
            for n, text in enumerate(src.text.splitlines(), 1):
                if src.is_notebook and _CELL_MARK.match(text):
                    cell, k = cell + 1, 0
                    out.append((n, "", "", f"Cell {cell}"))
                    continue
                k += 1
                if MAGIC_PREFIX in text or CODE_MAGIC in text:
                    text = unmask_line(text)  # magics as written in the cell (also indented ones)
                out.append((n, k if src.is_notebook else n, text, None))
            return out
    return None


def render_site(report: dict[str, Any], out_dir: str, source_base: str = ".") -> str:
    """Write ``index.html``, ``files/N.html``, ``rules/CODE.html``, assets and
    ``report.json`` into ``out_dir``; returns the path of ``index.html``.

    ``source_base`` is the folder the report's file paths are relative to
    (the original project's, so the per-file pages show the code as scanned).
    Raises ``OSError`` if ``out_dir`` cannot be written.
    """
    env = _env()
    os.makedirs(os.path.join(out_dir, "files"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "rules"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "assets"), exist_ok=True)
    for asset in ("style.css", "report.js"):
        data = resources.files("ascendify.report").joinpath("assets").joinpath(asset).read_bytes()
        atomic_write(os.path.join(out_dir, "assets", asset), data)

    findings = report["findings"]
    files = report["summary"]["files"]
    file_pages = {f["path"]: f["page"] for f in files}
    by_step: dict[int, list] = {}
    for st in report["plan"]:
        by_step[st["step"]] = [d for d in findings if d.get("step") == st["step"]]
    ctx = {"report": report, "root": "", "chart": category_chart(findings), "by_step": by_step, "file_pages": file_pages,
           "section_order": SECTION_ORDER, "section_hint": SECTION_HINT}
    index = os.path.join(out_dir, "index.html")
    atomic_write(index, env.get_template("index.html.j2").render(**ctx).encode("utf-8"))

    per_file: dict[str, list] = {}
    for d in findings:
        per_file.setdefault(d["path"], []).append(d)
    tpl = env.get_template("file.html.j2")
    for f in files:
        by_line: dict[int, list] = {}
        for d in per_file.get(f["path"], []):
            by_line.setdefault(d["line"], []).append(d)
        source = _read_source(f["path"], source_base)
        html = tpl.render(report=report, root="../", file=f, source=source, by_line=by_line, file_pages=file_pages)
        atomic_write(os.path.join(out_dir, f["page"]), html.encode("utf-8"))

    rules = load_rules()
    rtpl = env.get_template("rule.html.j2")
    for code in sorted({d["code"] for d in findings} | set(report.get("rules", {}))):
        r = rules.get(code)
        if r is None:
            continue
        html = rtpl.render(report=report, root="../", rule=r, body=Markup(_markdown(rule_page_markdown(r))))
        atomic_write(os.path.join(out_dir, "rules", f"{code}.html"), html.encode("utf-8"))
    atomic_write(os.path.join(out_dir, "report.json"), (json.dumps(report, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return index
