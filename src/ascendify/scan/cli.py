"""``ascendify scan``, ``fix``, ``rules`` and ``rule``."""

from __future__ import annotations

import json
import os
import sys
from typing import Optional

import click

from ascendify.config import Settings
from ascendify.errors import AscendifyError
from ascendify.options import deprecated_option, deprecated_value, emit, envelope, out_dir_option, project_options, project_settings, report_options
from ascendify.output import formats
from ascendify.output.summary import summarize
from ascendify.rules.registry import load_rules
from ascendify.scan.engine import ScanResult, default_cache_dir, discover, scan_files
from ascendify.diagnostics import Finding, severity_rank


class FileProgress:
    """Progress of a long phase over ``total`` files, on stderr: a rich bar on a TTY (more than
    50 files), else (``lines``) one line every ``every`` seconds (``ascendify: fixing: 120/352
    files, 10 s``) once a run takes that long.  Call it with the number of files done."""

    def __init__(self, label: str, total: int, lines: bool = True, every: float = 10.0):
        import time

        self.label, self.total, self.every, self.done = label, total, every, 0
        self._clock = time.monotonic
        self._t0 = self._next = self._clock()
        self._next += every
        self.bar = None
        self.lines = lines and not sys.stderr.isatty()
        if sys.stderr.isatty() and total > 50:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self.bar = Bar(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self._task = self.bar.add_task(label, total=total)
            self.bar.start()

    def __call__(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.advance(self._task, n)
        elif self.lines:
            now = self._clock()
            if now >= self._next:
                self._next = now + self.every
                click.echo(f"ascendify: {self.label}: {self.done}/{self.total} files, {now - self._t0:.0f} s", err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _run_scan(paths, settings: Settings, cache_dir, no_cache, jobs, quiet=False, lines=False) -> ScanResult:
    problems: list[tuple[str, str]] = []
    from ascendify.deps.parse import is_dependency_file  # a requirements file named explicitly is audited (below), not skipped
    from ascendify.scan.engine import _skip_note

    entries = discover(paths, settings, lambda p, m: problems.append((p, m)), on_skip=lambda p, m: None if is_dependency_file(p) else _skip_note(p, m))
    cache = None if no_cache else (cache_dir or default_cache_dir())
    progress = None if quiet else FileProgress("scanning", len(entries), lines=lines)
    try:
        result = scan_files(entries, settings, cache, jobs, progress)
    finally:
        if progress is not None:
            progress.close()
    result.problems = problems
    from ascendify.deps import add_to_scan  # the dependency audit (requirements, pyproject, ...): DEP findings

    add_to_scan(paths, settings, result)
    return result


GIVEN_PATH_ERRORS = ("no such file or folder", "not a file or folder (broken symlink?)")
"""Problems of a path given on the command line: errors, said as every command says one (migrate's
"ascendify: error: PATH: no such file or folder"); the others (a loop or broken link inside a folder)
are notes on what the walk left out."""


def problem_line(path: str, message: str) -> str:
    """The stderr line of a scan problem (``ScanResult.problems``)."""
    return f"ascendify: {'error: ' if message in GIVEN_PATH_ERRORS else ''}{path}: {message}"


def _nothing_found(result: ScanResult) -> bool:
    """No file was found because none of the given paths exists (exit 2, no summary)."""
    return not result.findings and bool(result.problems) and all(m == "no such file or folder" for _, m in result.problems)


def _exit_code(findings: list[Finding], fail_on: str, problems: list) -> int:
    if problems:
        return 2 if not findings and all(m == "no such file or folder" for _, m in problems) else 1
    if fail_on == "never":
        return 0
    threshold = severity_rank(fail_on)
    return 1 if any(severity_rank(f.severity) >= threshold for f in findings) else 0


def _settings_dict(s: Settings) -> dict:
    return {"target": s.target, "torch_npu": s.torch_npu, "torch_npu_reason": s.torch_npu_reason,
            "torch_npu_requested": s.torch_npu_requested or None, "chip": s.chip, "select": s.select, "ignore": s.ignore,
            "fail_on": s.fail_on, "config_file": s.config_file}


@click.command("scan")
@click.argument("paths", nargs=-1, type=click.Path())
@project_options
@report_options(*[f for f in formats.FORMATS if f not in ("text", "json")])
@click.option("--no-summary", is_flag=True, help="Text format: findings only.")
@click.option("--statistics", is_flag=True, help="Text format: counts per rule instead of findings.")
def scan(paths, select, select_extend, ignore, ignore_extend, exclude, target, torch_npu, chip, config_file, no_config,
         cache_dir, no_cache, jobs, fail_on, fmt, output_file, no_summary, statistics):
    """Find everything in PATHS (.py, .ipynb, folders) that must change for Ascend NPU.

    Each finding is `path:line:col: CODE [*] message`; [*] marks findings
    that `ascendify fix` rewrites safely, [-] those it rewrites with
    --unsafe-fixes.  `ascendify rule CODE` explains a code.
    """
    paths = paths or (".",)
    settings = project_settings(paths, select, select_extend, ignore, ignore_extend, exclude, target, torch_npu, chip, config_file, no_config, fail_on)
    result = _run_scan(paths, settings, cache_dir, no_cache, jobs, quiet=fmt != "text")
    for p, m in result.problems:
        click.echo(problem_line(p, m), err=True)
    if _nothing_found(result):  # every path given is missing: the error lines above say it all
        return 2
    summary = summarize(result.findings, result.files, result.lines)
    if fmt == "json":
        emit(formats.render_json(result.findings, summary, _settings_dict(settings)), output_file)
    elif fmt == "sarif":
        emit(formats.render_sarif(result.findings, {"torch_npu": settings.torch_npu, "torch_npu_reason": settings.torch_npu_reason},
                                  rules=load_rules()), output_file)
    elif fmt == "csv":
        emit(formats.render_csv(result.findings), output_file)
    elif statistics:
        rules = load_rules()
        lines = [f"{n:>5}  {code:<7} {'[*]' if rules[code].fixable == 'safe' else '   '} {rules[code].name}" for code, n in sorted(summary["by_code"].items(), key=lambda kv: -kv[1])]
        emit("\n".join(lines) + ("\n" if lines else ""), output_file)
    else:
        colour = output_file is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        text = formats.render_text(result.findings, summary, colour, not no_summary)
        if not no_summary:
            text += target_line(settings) + "\n"
        emit(text, output_file)
    return _exit_code(result.findings, settings.fail_on, result.problems)


# --------------------------------------------------------------------------- fix
@click.command("fix")
@click.argument("paths", nargs=-1, type=click.Path())
@project_options
@click.option("--diff", "diff_flag", is_flag=True, help="Print a unified diff; write nothing (default).")
@click.option("--write", "write_flag", is_flag=True, help="Edit the files in place (atomically).")
@out_dir_option("Write a migrated copy of the whole tree here, plus the change log.")
@deprecated_option("--output", dest="out_dir", new="--out-dir DIR", type=click.Path(file_okay=False), default=None)
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that need review.")
@click.option("--changelog", type=click.Path(dir_okay=False), default=None, metavar="FILE", help="Also write the change log (CSV, and JSON next to it).")
@report_options(output_help="Write the report (text: the diff in --diff mode and the summary; json: the changes and what remains) to this file.")
def fix(paths, select, select_extend, ignore, ignore_extend, exclude, target, torch_npu, chip, config_file, no_config,
        cache_dir, no_cache, jobs, fail_on, diff_flag, write_flag, out_dir, unsafe_fixes, changelog, fmt, output_file):
    """Rewrite what can be rewritten safely in PATHS.

    By default prints a unified diff and changes nothing.  --write edits in
    place; --out-dir DIR writes a migrated copy (other files copied unchanged)
    and the change log (DIR/ascendify-changes.csv and .json).
    """
    from ascendify.deps import fix_tree as deps_fix_tree  # fix.run.fix_tree plus the DEP fixes of dependency files

    out_dir = deprecated_value("out_dir", out_dir)
    given = [f for f, on in (("--diff", diff_flag), ("--write", write_flag), ("--out-dir", bool(out_dir))) if on]
    if len(given) > 1:  # never drop one silently (the last of --diff/--write used to win)
        raise AscendifyError(f"fix: {' and '.join(given)} are different modes; choose one of --diff, --write, --out-dir")
    mode = "write" if write_flag else "diff"
    paths = paths or (".",)
    settings = project_settings(paths, select, select_extend, ignore, ignore_extend, exclude, target, torch_npu, chip, config_file, no_config, fail_on, unsafe_fixes)
    if settings.target == "agnostic":
        from ascendify.target import agnostic_torch_conflict

        conflict = next((c for c in map(agnostic_torch_conflict, paths) if c), None)
        if conflict and (out_dir or mode == "write"):  # a copy that cannot import on the project's own torch
            raise AscendifyError(conflict)
        if conflict:
            click.echo(f"ascendify: warning: {conflict}", err=True)
    if out_dir:
        mode = "output"
        from ascendify.fsutil import stale_output_warning

        if any(os.path.realpath(p) == os.path.realpath(out_dir) for p in paths):  # before any warning: just the error
            raise AscendifyError(f"{out_dir}: the output folder must differ from the input (use --write to edit in place)")
        warning = stale_output_warning(out_dir)
        if warning:
            click.echo(f"ascendify: warning: {warning}", err=True)
    result = _run_scan(paths, settings, cache_dir, no_cache, jobs, quiet=fmt != "text", lines=True)
    for p, m in result.problems:
        click.echo(problem_line(p, m), err=True)
    if _nothing_found(result):
        return 2
    progress = FileProgress("fixing", len({f.path for f in result.findings if f.fix is not None}))
    try:
        run = deps_fix_tree(paths, result, settings, mode, out_dir, jobs=jobs, progress=progress)
    finally:
        progress.close()
    report_fix_run(run)
    if changelog:
        run.write_changelog(changelog)
    verb = {"diff": "would fix", "write": "fixed", "output": "fixed"}[mode]
    if fmt == "json":
        emit(json.dumps(fix_json(run, mode, out_dir, settings), indent=2, ensure_ascii=False, default=str) + "\n", output_file)
    elif mode == "diff" or output_file:
        emit((run.diff if mode == "diff" else "") + (fix_summary(run, verb) + "\n" if output_file else ""), output_file)
    click.echo(fix_summary(run, verb), err=True)
    if mode == "output":
        click.echo(f"migrated copy: {out_dir}", err=True)
        click.echo(f"change log:    {os.path.join(out_dir, 'ascendify-changes.csv')} (and .json)", err=True)
    if run.unwritten:  # --write could not write a file: the run failed, whatever --fail-on says (exit 2, as a
        return 2       # migrated copy that cannot be written)
    return _exit_code(run.remaining, settings.fail_on, result.problems + run.problems)


def report_fix_run(run) -> None:
    """Print a fix run's per-file errors and the files missing from its copy (stderr)."""
    from ascendify.output.escape import text_safe

    for path, err in run.errors + run.problems:
        click.echo(text_safe(f"ascendify: {path}: {err}"), err=True)
    for path, reason, n in run.unwritten:  # the run failed here: an error line, as a file that cannot be written elsewhere
        click.echo(text_safe(f"ascendify: error: {path}: not written ({reason}): {n} fix(es) not applied, file left unchanged; "
                             "make the file and its folder writable and rerun"), err=True)


def target_line(settings: Settings) -> str:
    """The line every report prints: which release it judged against and why."""
    return f"Judged against torch_npu {settings.torch_npu} ({settings.torch_npu_reason or 'default'})."


def fix_json(run, mode: str, out_dir: Optional[str], settings: Settings) -> dict:
    """``fix --format json``: the run's counts, each change and each finding that remains."""
    from ascendify import __version__

    return {
        "tool": "ascendify", "version": __version__, "command": "fix", "mode": mode, "out_dir": out_dir,
        "settings": _settings_dict(settings), "stats": run.stats(),
        "changes": run.changes,
        "remaining": [run.remaining_entry(f) for f in run.remaining],
        "errors": [{"path": p, "error": e} for p, e in run.errors + run.problems],
        "not_written": [{"path": p, "reason": why, "fixes": n} for p, why, n in run.unwritten],
    }


def fix_summary(run, verb: str) -> str:
    """The one-line summary of a fix run (``verb``: would fix / fixed)."""
    s = run.stats()
    settled = (run.counts or {}).get("settled")
    gone = (f", and {settled} more {'would go' if verb.startswith('would') else 'went'} with those fixes (call sites of the fixed code)"
            if settled else "")
    # remaining: what a scan of the fixed code finds (the final state of every file and the project pass over it);
    # with files --write could not write, their unapplied fixes still remain too (nothing of those files changed)
    unsafe = f" ({s['unsafe_skipped']} of them fixable with --unsafe-fixes)" if s["unsafe_skipped"] else ""
    if run.unwritten:
        left = (f"{s['remaining'] + s['not_written']} remaining finding(s): {s['remaining']} need a person{unsafe}, "
                f"{s['not_written']} have fixes in {s['files_not_written']} file(s) that were not written (see above), those files unchanged")
    else:
        left = f"{s['remaining']} remaining finding(s) need a person{unsafe}"
    return (f"{verb} {s['applied']} finding(s) in {s['files_changed']} file(s){gone}; {left}"
            + (f"; {len(run.errors)} file(s) could not be rewritten (see above) and were left unchanged" if run.errors else "")
            + (f"; {len(run.problems)} file(s) are missing from the migrated copy (see above)" if run.problems else "") + ".")


# --------------------------------------------------------------------------- rules
@click.command("rules")
@report_options("markdown")
@click.option("--category", default=None, help="Only this category (e.g. device, distributed, amp).")
def rules_cmd(fmt, output_file, category):
    """List every rule: code, severity, auto-fix, name."""
    everything = list(load_rules().values())
    if category is not None:
        known = {k.lower() for r in everything for k in (r.category, r.prefix)}
        if category.lower() not in known:
            cats = sorted({r.category for r in everything})
            prefixes = sorted({r.prefix for r in everything})
            raise AscendifyError(f"rules --category '{category}': unknown; known categories: {', '.join(cats)} "
                                 f"(or a code prefix: {', '.join(prefixes)})")
    rules = [r for r in everything if category is None or category.lower() in (r.category.lower(), r.prefix.lower())]
    if fmt == "json":
        from ascendify.options import envelope

        doc = {"category": category, "count": len(rules), "rules": [r.__dict__ | {"category": r.category} for r in rules]}
        emit(json.dumps(envelope("rules", doc), indent=2, ensure_ascii=False) + "\n", output_file)
        return 0
    out = []
    if fmt == "markdown":
        out.append("| code | name | category | severity | fix |\n|---|---|---|---|---|")
        out.extend(f"| {r.code} | {r.name} | {r.category} | {r.severity} | {r.fixable or '-'} |" for r in rules)
        emit("\n".join(out) + "\n", output_file)
        return 0
    from ascendify.termtable import report_width, wrap

    width = report_width()  # $COLUMNS, else the terminal's width, else 160 (a file or pipe): ascendify.termtable
    last = None
    for r in rules:
        if r.category != last:
            out.append(f"{'' if last is None else chr(10)}{r.category} ({r.prefix})")
            last = r.category
        mark = {"safe": "[*]", "unsafe": "[-]", "": "   "}[r.fixable]
        lead = f"  {r.code} {mark} {r.severity:<7} "
        out.extend(wrap(f"{r.name}: {r.summary}", width, lead, " " * (len(lead) if width - len(lead) >= 30 else 4)))
    out.append("")
    out.extend(wrap(f"{len(rules)} rules. [*] safe auto-fix, [-] auto-fix with --unsafe-fixes. "
                    "`ascendify rule CODE` shows a rule's page.", width))
    emit("\n".join(out) + "\n", output_file)
    return 0


@click.command("rule")
@click.argument("code")
@report_options("markdown")
def rule_cmd(code, fmt, output_file):
    """Show one rule's page: what it finds, why it matters on NPU, example, fix, source."""
    rules = load_rules()
    r = rules.get(code.upper())
    if r is None:
        close = [c for c in rules if c.startswith(code.upper()[:3])][:8]
        raise AscendifyError(f"no rule {code!r}" + (f"; rules with that prefix: {', '.join(close)}" if close else "; see `ascendify rules`"))
    if fmt == "json":
        emit(json.dumps(envelope("rule", r.__dict__ | {"category": r.category}), indent=2, ensure_ascii=False) + "\n", output_file)
    else:  # markdown, rich Markdown on a terminal, plain text otherwise
        from ascendify.rules import page as rulepage

        rulepage.show(r, fmt, output_file, emit)
    return 0
