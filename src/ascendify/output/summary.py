"""Scan summary: counts per file, category and severity, share auto-fixable, effort per file."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Optional

from ascendify.diagnostics import SEVERITIES, Finding

EFFORTS = ("none", "low", "medium", "high", "skipped")

# --------------------------------------------------------------------------- "fixed": one definition
FIX_STATES = ("fixed", "settled", "unsafe", "manual")
"""What happens to a finding: ``fixed`` — ``ascendify fix`` rewrites it (with the run's settings, or,
after a fix run, the run did rewrite it); ``settled`` — it has no fix of its own but goes once the
findings it is made from are fixed (a call site's DEV026 when the helper's CUDA work is all fixed: its
``related`` entries are its ``cause``); ``unsafe`` — it has a fix that needs ``--unsafe-fixes``
and was not applied; ``manual`` — no automatic fix (or one that did not apply).  A finding that is
not ``fixed`` needs a person.  Scan's summary, the fix run's change log and the report all count
with :func:`fix_state` / :func:`fix_counts`, so their numbers agree."""


def finding_key(f: Finding) -> tuple:
    """Where a finding is, as the change log records it: (file, cell, line, code); line is the
    notebook cell's line for notebooks (the change log's ``source_line``)."""
    return (f.path, f.cell if f.cell is not None else "", f.cell_line or f.line, f.code)


def fixed_by_run(findings: list[Finding], run) -> set:
    """``id()`` of each finding of ``findings`` (the scan a fix run started from) whose fix the
    run applied, in any pass: matched by the change log's rows (file, cell, source line, code;
    several findings of one rule on one line take as many rows as there are)."""
    rows: dict = {}
    for c in run.changes:
        k = (c["file"], c["cell"], c["source_line"], c["code"])
        rows[k] = rows.get(k, 0) + 1
    out = set()
    for f in sorted((f for f in findings if f.fix is not None), key=Finding.sort_key):
        k = finding_key(f)
        if rows.get(k, 0) > 0:
            rows[k] -= 1
            out.add(id(f))
    return out


def settled_by_plan(findings: list[Finding], unsafe_fixes: bool = False) -> set:
    """``id()`` of each finding without a fix of its own whose every related entry is a cause that
    ``ascendify fix`` fixes (:func:`fix_state` "fixed"): a fix run does not leave it (its related
    entries are all the work behind it; the project pass marks them ``cause``)."""
    planned = {(f.path, f.line, f.col, f.code) for f in findings if f.fix is not None and (f.fix.safe or unsafe_fixes)}
    out = set()
    for f in findings:
        causes = [r for r in f.related or () if "cause" in r]  # entries without it explain (an import's resolution)
        if f.fix is None and causes and all(r["cause"] and (r.get("path"), r.get("line"), r.get("col"), r.get("code")) in planned
                                            for r in causes):
            out.add(id(f))
    return out


def fix_state(f: Finding, unsafe_fixes: bool = False, fixed: Optional[set] = None, settled: Optional[set] = None) -> str:
    """The finding's :data:`FIX_STATES` entry.  ``fixed``: ids from :func:`fixed_by_run` after a
    fix run; None = what ``ascendify fix`` would do (safe fixes, and unsafe ones with ``unsafe_fixes``).
    ``settled``: ids from :func:`settled_by_plan` (for a plan)."""
    if settled and id(f) in settled:
        return "settled"
    if f.fix is None:
        return "manual"
    if fixed is not None:
        if id(f) in fixed:
            return "fixed"
        return "manual" if f.fix.safe or unsafe_fixes else "unsafe"
    return "fixed" if f.fix.safe or unsafe_fixes else "unsafe"


def fix_counts(findings: list[Finding], unsafe_fixes: bool = False, fixed: Optional[set] = None,
               settled: Optional[set] = None) -> dict[str, Any]:
    """Counts by :func:`fix_state`: ``findings``, ``fixed`` (rewritten), ``settled`` (no fix of its own,
    gone with the fixes of what it is made from), ``fixed_share`` (0–1, 3 decimals), ``open`` (need a
    person: findings − fixed − settled), of which ``unsafe`` (fixable with --unsafe-fixes) and
    ``manual``; ``done`` is True after a fix run (``fixed`` given), False for a plan.  After a fix run
    the caller sets ``open``/``settled`` from the final state of the fixed tree."""
    states = Counter(fix_state(f, unsafe_fixes, fixed, settled) for f in findings)
    n = len(findings)
    return {"findings": n, "fixed": states["fixed"], "fixed_share": round(states["fixed"] / n, 3) if n else 0.0,
            "settled": states["settled"], "open": n - states["fixed"] - states["settled"], "unsafe": states["unsafe"],
            "manual": states["manual"], "done": fixed is not None}


def fixed_sentence(c: dict[str, Any]) -> str:
    """One sentence for :func:`fix_counts`, the same in scan's summary, the fix run and the report."""
    n = c["findings"]
    head = (f"{c['fixed']} of {n} finding(s) fixed automatically ({c['fixed_share']:.0%})" if c["done"]
            else f"`ascendify fix` fixes {c['fixed']} of {n} finding(s) automatically ({c['fixed_share']:.0%})")
    if c.get("settled"):  # findings + 0 = fixed + settled + open
        head += (f", {c['settled']} more went with those fixes" if c["done"] else f", {c['settled']} more go with those fixes")
        head += " (call sites of the fixed code)"
    tail = f"; {c['open']} need a person"
    if c["unsafe"]:
        tail += f" ({c['unsafe']} of them fixable with --unsafe-fixes)"
    if c.get("new"):
        tail += f"; {c['new']} of those are new in the fixed code"
    if c.get("not_written"):  # fix --write: files that could not be written (neither fixed nor for a person)
        tail += f"; {c['not_written']} fix(es) not written (the file could not be written)"
    return head + tail + "."


# --------------------------------------------------------------------------- effort: one definition
HEAVY_CATEGORIES = frozenset({"amp", "compile", "third-party", "distributed"})
"""Categories whose manual findings mean rewriting code, not renaming a call: replacing apex or
another CUDA-only library, porting AMP, choosing a torch.compile backend, re-plumbing collectives."""


NOT_PYTHON = frozenset({"SYN002", "SYN003", "SYN004"})
"""Parse findings of a file that was never read as Python (undecodable, binary, unreadable or
over the size limit, a notebook that is not JSON): such a file is graded ``skipped``, not effort.
A syntax error (SYN001) is Python that needs porting or repair: effort ``high``."""


def file_effort(findings: list[Finding], unsafe_fixes: bool = False, fixed: Optional[set] = None,
                settled: Optional[set] = None) -> tuple[str, str]:
    """(effort, reasoning) for one file's findings, from :func:`fix_state`.

    none: nothing to change.  skipped: only :data:`NOT_PYTHON` findings (the file was not read as
    Python: "not Python (skipped)").  high: a parse error or CUDA-only third-party code (error/silent)
    to replace, more than 5 error/silent findings left for a person, or manual warnings or
    errors in 3 or more categories.  medium: any error/silent finding left for a person, more than 5 left,
    or manual warnings in a category that means rewriting code (:data:`HEAVY_CATEGORIES`:
    apex, AMP, torch.compile, collectives) or in 2 categories.  low: everything else — all
    fixed, or a few notes/warnings in one category and fixes to review.
    """
    if not findings:
        return "none", "no findings"
    if all(f.code in NOT_PYTHON for f in findings):  # nothing in it was read: no work to grade
        what = findings[0].message.removesuffix("; skipped")
        return "skipped", f"not Python (skipped): {what}; nothing in it was checked"

    def count(k: int, one: str, many: str) -> str:
        return f"{k} {one if k == 1 else many}"

    n = len(findings)
    states = [(f, fix_state(f, unsafe_fixes, fixed, settled)) for f in findings]
    done = [f for f, st in states if st == "fixed"]
    gone = [f for f, st in states if st == "settled"]
    unsafe = [f for f, st in states if st == "unsafe"]
    manual = [f for f, st in states if st == "manual"]
    manual_severe = [f for f in manual if f.severity in ("error", "silent")]
    manual_warn = [f for f in manual if f.severity == "warning"]
    ext = [f for f in manual if f.category == "parse" or (f.category == "third-party" and f.severity in ("error", "silent"))]
    acts = manual_severe + manual_warn  # manual findings to act on (info findings are notes)
    cats = sorted({f.category for f in acts})
    heavy = sorted({f.category for f in acts if f.category in HEAVY_CATEGORIES})
    # "safely" for the plan of a run without --unsafe-fixes (only safe fixes go in)
    verb = "fixed safely by `ascendify fix`" if fixed is None and not unsafe_fixes else "fixed by `ascendify fix`"
    head = f"{count(n, 'finding', 'findings')}, {len(done)} {verb}"
    if gone:
        head += f", {len(gone)} with the fixes of the code {'it calls' if len(gone) == 1 else 'they call'}"
    if unsafe:
        head += f", {len(unsafe)} more with `--unsafe-fixes`"

    def codes(fs: list) -> str:
        return ", ".join(sorted({f.code for f in fs}))

    if ext:
        parse = [f for f in ext if f.category == "parse"]
        if parse and len(parse) == len(ext):
            return "high", f"{head}; does not parse as Python 3 ({codes(parse)}): port or repair it; nothing in it was checked"
        return "high", f"{head}; {count(len(ext), 'needs', 'need')} CUDA-only code replaced or the file repaired ({codes(ext)})"
    if len(manual_severe) > 5:
        return "high", f"{head}; {len(manual_severe)} error/silent findings need manual changes"
    if len(cats) >= 3:
        return "high", f"{head}; {len(acts)} findings need manual work in {len(cats)} areas ({', '.join(cats)}: {codes(acts)})"
    if manual_severe:
        return "medium", f"{head}; {count(len(manual_severe), 'error/silent finding needs', 'error/silent findings need')} manual changes ({codes(manual_severe)})"
    if len(manual) > 5:
        return "medium", f"{head}; {len(manual)} warning/info findings to review by hand"
    if heavy:
        return "medium", f"{head}; code to rewrite by hand ({', '.join(heavy)}: {codes([f for f in manual_warn if f.category in heavy])})"
    if len({f.category for f in manual_warn}) >= 2:
        return "medium", f"{head}; warnings to act on by hand in {len({f.category for f in manual_warn})} areas ({codes(manual_warn)})"
    if manual or unsafe:
        rest = len(manual) + len(unsafe)
        return "low", f"{head}; {count(rest, 'finding', 'findings')} to review"
    return "low", f"{head}; nothing left for a person"


EFFORT_ORDER = {"high": 0, "medium": 1, "low": 2, "none": 3, "skipped": 4}
EFFORT_TOP = 10
"""How many files the text summary's effort list shows (JSON lists every file)."""


def effort_top(files: list[dict], n: int = EFFORT_TOP) -> tuple[list[dict], Counter]:
    """The ``n`` files of a :func:`summarize` ``files`` list with the most work — by effort
    (high, medium, low), then remaining findings, then path — and a Counter of the efforts of
    the files with findings that are left out."""
    with_findings = sorted((f for f in files if f["findings"]),
                           key=lambda f: (EFFORT_ORDER.get(f["effort"], 9), -f["remaining"], -f["findings"], f["path"]))
    return with_findings[:n], Counter(f["effort"] for f in with_findings[n:])


def summarize(findings: list[Finding], files: list[str], lines: dict | None = None,
              unsafe_fixes: bool = False, fixed: Optional[set] = None) -> dict[str, Any]:
    """The summary dict shared by text and JSON output (schema in docs/output.md).

    ``fixed``/``fixed_share``/``open``/``unsafe`` and each file's ``fixed``/``remaining``/``effort``
    come from :func:`fix_counts` / :func:`file_effort`: what ``ascendify fix`` would do
    (``fixed`` None), or what a fix run did (``fixed`` from :func:`fixed_by_run`)."""
    per_file: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        per_file[f.path].append(f)
    # the plan's: after a fix run too (per file; the run's totals come from the final state, fix_tree)
    settled = settled_by_plan(findings, unsafe_fixes)
    by_sev = Counter(f.severity for f in findings)
    by_cat = Counter(f.category for f in findings)
    by_code = Counter(f.code for f in findings)
    fixable = sum(1 for f in findings if f.fix is not None)
    safe = sum(1 for f in findings if f.fix is not None and f.fix.safe)
    files_out = []
    for path in sorted(set(files) | set(per_file)):
        fs = per_file.get(path, [])
        effort, why = file_effort(fs, unsafe_fixes, fixed, settled)
        fc = fix_counts(fs, unsafe_fixes, fixed, settled)
        files_out.append(
            {
                "path": path,
                "lines": (lines or {}).get(path),
                "findings": len(fs),
                "fixable": sum(1 for f in fs if f.fix is not None),
                "fixed": fc["fixed"],
                "remaining": fc["open"],
                "by_severity": {s: c for s, c in Counter(f.severity for f in fs).items()},
                "effort": effort,
                "effort_reason": why,
            }
        )
    counts = fix_counts(findings, unsafe_fixes, fixed, settled)
    return {
        "files_scanned": len(files),
        "lines_scanned": sum((lines or {}).values()),
        "findings": len(findings),
        "fixable": fixable,
        "fixable_safe": safe,
        "fixable_share": round(fixable / len(findings), 3) if findings else 0.0,
        "fixed": counts["fixed"],
        "fixed_share": counts["fixed_share"],
        "settled": counts["settled"],
        "open": counts["open"],
        "unsafe": counts["unsafe"],
        "fixed_done": counts["done"],
        "fixed_text": fixed_sentence(counts),
        "by_severity": {s: by_sev.get(s, 0) for s in reversed(SEVERITIES)},
        "by_category": dict(sorted(by_cat.items())),
        "by_code": dict(sorted(by_code.items())),
        "effort": dict(Counter(f["effort"] for f in files_out)),
        "files": files_out,
    }
