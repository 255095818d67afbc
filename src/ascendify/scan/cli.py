"""``ascendify scan``, ``fix``, ``rules`` and ``rule``."""

from __future__ import annotations

import json
import re
import os
import sys
from typing import Optional

import click

from ascendify.cli import cli
from ascendify.config import Settings, find_config, load_settings
from ascendify.errors import AscendifyError
from ascendify.output import formats
from ascendify.output.summary import summarize
from ascendify.rules.registry import load_rules
from ascendify.scan.engine import ScanResult, default_cache_dir, discover, scan_files
from ascendify.scan.finding import SEVERITIES, Finding, severity_rank


_VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?((\.post|rc|\.rc)\d+)?$")


def _split_codes(values: tuple) -> list[str]:
    out = []
    for v in values:
        out.extend(c.strip().upper() for c in v.split(",") if c.strip())
    return out


def common_options(fn):
    opts = [
        click.option("--select", multiple=True, metavar="CODES", help="Only these rule codes or prefixes (comma-separated; e.g. DEV,DST001)."),
        click.option("--extend-select", "select_extend", multiple=True, metavar="CODES", help="Add to the configured select."),
        click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rule codes or prefixes."),
        click.option("--extend-ignore", "ignore_extend", multiple=True, metavar="CODES", help="Add to the configured ignore."),
        click.option("--exclude", multiple=True, metavar="GLOB", help="Extra file/folder patterns to skip (added to the defaults)."),
        click.option("--target", type=click.Choice(["npu", "agnostic"]), default=None, help="Fix target: explicit torch_npu (npu, default) or device-agnostic torch.accelerator code."),
        click.option("--torch-npu", "torch_npu", metavar="VERSION", default=None, help="Target torch_npu release (e.g. 2.7.1)."),
        click.option("--chip", metavar="SOC", default=None, help="Target soc_version, e.g. Ascend910B3, Ascend310P3 (enables chip checks such as bf16)."),
        click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None, help="pyproject.toml to read [tool.ascendify] from (default: nearest one)."),
        click.option("--no-config", is_flag=True, help="Ignore any pyproject.toml."),
        click.option("--cache-dir", type=click.Path(file_okay=False), default=None, help="Cache folder (default: ~/.cache/ascendify)."),
        click.option("--no-cache", is_flag=True, help="Do not read or write the cache."),
        click.option("-j", "--jobs", type=click.IntRange(1, 256), default=None, help="Parallel processes (default: CPU count)."),
        click.option("--fail-on", type=click.Choice(list(SEVERITIES) + ["never"]), default=None, help="Exit 1 if a finding at or above this severity remains (default: error)."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def _settings(paths, select, select_extend, ignore, ignore_extend, exclude, target, torch_npu, chip, config_file, no_config, fail_on, unsafe_fixes=None) -> Settings:
    if config_file and not os.path.isfile(config_file):
        raise AscendifyError(f"{config_file}: no such config file; check the --config path")
    cfg = None if no_config else (config_file or find_config(paths[0] if paths else "."))
    overrides = {
        "select": _split_codes(select),
        "select_extend": _split_codes(select_extend),
        "ignore": _split_codes(ignore),
        "ignore_extend": _split_codes(ignore_extend),
        "extend_exclude": list(exclude),
        "target": target,
        "torch_npu": torch_npu,
        "chip": chip,
        "fail_on": fail_on,
        "unsafe_fixes": unsafe_fixes or None,
    }
    s = load_settings(cfg, overrides)
    if not _VERSION_RE.match(str(s.torch_npu)):
        raise AscendifyError(f"torch_npu version {s.torch_npu!r} is not a version (e.g. 2.7.1 or 2.7.1.post11); check --torch-npu or torch-npu in {s.config_file or 'the command line'}")
    if s.chip:
        from ascendify.kb.chips import chip_info

        if chip_info(s.chip) is None:
            click.echo(f"ascendify: warning: chip {s.chip!r} is not in the chip table (e.g. Ascend910B3, Ascend310P3, Ascend910_9392); chip-dependent checks treat it as unknown", err=True)
    known = set(load_rules())
    for code in s.select + s.ignore:
        if code != "ALL" and not any(k.startswith(code) for k in known):
            raise AscendifyError(f"unknown rule code or prefix {code!r} (see `ascendify rules`)")
    return s


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
    entries = discover(paths, settings, lambda p, m: problems.append((p, m)))
    cache = None if no_cache else (cache_dir or default_cache_dir())
    progress = None if quiet else FileProgress("scanning", len(entries), lines=lines)
    try:
        result = scan_files(entries, settings, cache, jobs, progress)
    finally:
        if progress is not None:
            progress.close()
    result.problems = problems
    return result


def _exit_code(findings: list[Finding], fail_on: str, problems: list) -> int:
    if problems:
        return 2 if not findings and all(m == "no such file or folder" for _, m in problems) else 1
    if fail_on == "never":
        return 0
    threshold = severity_rank(fail_on)
    return 1 if any(severity_rank(f.severity) >= threshold for f in findings) else 0


def _emit(text: str, output: Optional[str]) -> None:
    if output:
        try:
            with open(output, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        except OSError as exc:
            raise AscendifyError(f"{output}: cannot write ({exc.strerror}); choose another --output-file")
    else:
        click.echo(text, nl=False)


def _settings_dict(s: Settings) -> dict:
    return {"target": s.target, "torch_npu": s.torch_npu, "chip": s.chip, "select": s.select, "ignore": s.ignore,
            "fail_on": s.fail_on, "config_file": s.config_file}


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@common_options
@click.option("--format", "fmt", type=click.Choice(formats.FORMATS), default="text", help="Output format.")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), default=None, help="Write the report to this file instead of stdout.")
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
    settings = _settings(paths, select, select_extend, ignore, ignore_extend, exclude, target, torch_npu, chip, config_file, no_config, fail_on)
    result = _run_scan(paths, settings, cache_dir, no_cache, jobs, quiet=fmt != "text")
    for p, m in result.problems:
        click.echo(f"ascendify: {p}: {m}", err=True)
    summary = summarize(result.findings, result.files, result.lines)
    if fmt == "json":
        _emit(formats.render_json(result.findings, summary, _settings_dict(settings)), output_file)
    elif fmt == "sarif":
        _emit(formats.render_sarif(result.findings), output_file)
    elif fmt == "csv":
        _emit(formats.render_csv(result.findings), output_file)
    elif statistics:
        rules = load_rules()
        lines = [f"{n:>5}  {code:<7} {'[*]' if rules[code].fixable == 'safe' else '   '} {rules[code].name}" for code, n in sorted(summary["by_code"].items(), key=lambda kv: -kv[1])]
        _emit("\n".join(lines) + ("\n" if lines else ""), output_file)
    else:
        colour = output_file is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        _emit(formats.render_text(result.findings, summary, colour, not no_summary), output_file)
    return _exit_code(result.findings, settings.fail_on, result.problems)


# --------------------------------------------------------------------------- fix
@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@common_options
@click.option("--diff", "mode", flag_value="diff", default=True, help="Print a unified diff; write nothing (default).")
@click.option("--write", "mode", flag_value="write", help="Edit the files in place (atomically).")
@click.option("--output", "out_dir", type=click.Path(file_okay=False), default=None, help="Write a migrated copy of the whole tree here, plus the change log.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that need review.")
@click.option("--changelog", type=click.Path(dir_okay=False), default=None, help="Also write the change log (CSV, and JSON next to it).")
def fix(paths, select, select_extend, ignore, ignore_extend, exclude, target, torch_npu, chip, config_file, no_config,
        cache_dir, no_cache, jobs, fail_on, mode, out_dir, unsafe_fixes, changelog):
    """Rewrite what can be rewritten safely in PATHS.

    By default prints a unified diff and changes nothing.  --write edits in
    place; --output DIR writes a migrated copy (other files copied unchanged)
    and the change log (DIR/ascendify-changes.csv and .json).
    """
    from ascendify.fix.run import fix_tree

    paths = paths or (".",)
    settings = _settings(paths, select, select_extend, ignore, ignore_extend, exclude, target, torch_npu, chip, config_file, no_config, fail_on, unsafe_fixes)
    if out_dir:
        mode = "output"
        from ascendify.fix.run import stale_output_warning

        warning = stale_output_warning(out_dir)
        if warning:
            click.echo(f"ascendify: warning: {warning}", err=True)
    result = _run_scan(paths, settings, cache_dir, no_cache, jobs, lines=True)
    for p, m in result.problems:
        click.echo(f"ascendify: {p}: {m}", err=True)
    progress = FileProgress("fixing", len({f.path for f in result.findings if f.fix is not None}))
    try:
        run = fix_tree(paths, result, settings, mode, out_dir, jobs=jobs, progress=progress)
    finally:
        progress.close()
    if mode == "diff":
        click.echo(run.diff, nl=False)
    report_fix_run(run)
    if changelog:
        run.write_changelog(changelog)
    verb = {"diff": "would fix", "write": "fixed", "output": "fixed"}[mode]
    click.echo(fix_summary(run, verb), err=True)
    if mode == "output":
        click.echo(f"migrated copy: {out_dir}", err=True)
        click.echo(f"change log:    {os.path.join(out_dir, 'ascendify-changes.csv')} (and .json)", err=True)
    return _exit_code(run.remaining, settings.fail_on, result.problems + run.problems)


def report_fix_run(run) -> None:
    """Print a fix run's per-file errors and the files missing from its copy (stderr)."""
    from ascendify.output.escape import text_safe

    for path, err in run.errors + run.problems:
        click.echo(text_safe(f"ascendify: {path}: {err}"), err=True)


def fix_summary(run, verb: str) -> str:
    """The one-line summary of a fix run (``verb``: would fix / fixed)."""
    s = run.stats()
    return (f"{verb} {s['applied']} finding(s) in {s['files_changed']} file(s); {s['remaining']} remaining finding(s) need a person"
            + (f" ({s['unsafe_skipped']} more fixable with --unsafe-fixes)" if s["unsafe_skipped"] else "")
            + (f"; {len(run.errors)} file(s) could not be rewritten (see above) and were left unchanged" if run.errors else "")
            + (f"; {len(run.problems)} file(s) are missing from the migrated copy (see above)" if run.problems else "") + ".")


# --------------------------------------------------------------------------- rules
@cli.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text")
@click.option("--category", default=None, help="Only this category (e.g. device, distributed, amp).")
def rules_cmd(fmt, category):
    """List every rule: code, severity, auto-fix, name."""
    rules = [r for r in load_rules().values() if category in (None, r.category, r.prefix)]
    if fmt == "json":
        click.echo(json.dumps([r.__dict__ | {"category": r.category} for r in rules], indent=2, ensure_ascii=False))
        return 0
    if fmt == "markdown":
        click.echo("| code | name | category | severity | fix |\n|---|---|---|---|---|")
        for r in rules:
            click.echo(f"| {r.code} | {r.name} | {r.category} | {r.severity} | {r.fixable or '-'} |")
        return 0
    last = None
    for r in rules:
        if r.category != last:
            click.echo(f"{'' if last is None else chr(10)}{r.category} ({r.prefix})")
            last = r.category
        mark = {"safe": "[*]", "unsafe": "[-]", "": "   "}[r.fixable]
        click.echo(f"  {r.code} {mark} {r.severity:<7} {r.name}: {r.summary}")
    click.echo(f"\n{len(rules)} rules. [*] safe auto-fix, [-] auto-fix with --unsafe-fixes. `ascendify rule CODE` shows a rule's page.")
    return 0


@cli.command("rule")
@click.argument("code")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text")
def rule_cmd(code, fmt):
    """Show one rule's page: what it finds, why it matters on NPU, example, fix, source."""
    rules = load_rules()
    r = rules.get(code.upper())
    if r is None:
        close = [c for c in rules if c.startswith(code.upper()[:3])][:8]
        raise AscendifyError(f"no rule {code!r}" + (f"; rules with that prefix: {', '.join(close)}" if close else "; see `ascendify rules`"))
    if fmt == "json":
        click.echo(json.dumps(r.__dict__ | {"category": r.category}, indent=2, ensure_ascii=False))
    elif fmt == "markdown" or not sys.stdout.isatty():
        click.echo(formats.rule_markdown(r), nl=False)
    else:
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(formats.rule_markdown(r)))
    return 0
