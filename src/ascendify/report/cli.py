"""``ascendify migrate`` and ``ascendify report``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import click

from ascendify.errors import AscendifyError
from ascendify.fix.run import fix_tree, stale_output_warning
from ascendify.report.build import build_report, load_section_file
from ascendify.report.html import render_site
from ascendify.fsutil import is_within
from ascendify.scan.cli import _exit_code, _run_scan, _settings, common_options, report_fix_run

DOCTOR_TIMEOUT_S = 120
PROBE_TIMEOUT_S = 600


def _run_json_command(args: list[str], timeout: int) -> dict[str, Any]:
    """Run ``python -m ascendify ARGS`` and return its JSON, or a not-run record saying why."""
    cmd = [sys.executable, "-m", "ascendify", *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"status": "not run", "reason": f"`ascendify {' '.join(args)}` did not finish within {timeout} s"}
    except OSError as exc:
        return {"status": "not run", "reason": f"could not start `ascendify {args[0]}`: {exc.strerror}"}
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"status": "not run", "reason": f"`ascendify {' '.join(args)}` failed (exit {proc.returncode}): {err}"}


def _includes(paths: tuple) -> dict[str, Any]:
    out = {}
    for p in paths:
        try:
            name, data = load_section_file(p)
        except ValueError as exc:
            raise AscendifyError(str(exc))
        out[name] = data
    return out


@click.command()
@click.argument("project", type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--output", "out", required=True, type=click.Path(file_okay=False), help="Output folder: OUT/project (migrated copy) and OUT/report (HTML + JSON).")
@common_options
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that need review.")
@click.option("--probe", "probe_spec", default=None, metavar="MODULE:FACTORY", help="Also run `ascendify probe` on this model factory (with --input).")
@click.option("--input", "probe_inputs", multiple=True, metavar="SPEC", help="Probe input spec, e.g. x:2,3,32,32:float32 (repeatable).")
@click.option("--no-doctor", is_flag=True, help="Do not run `ascendify doctor`.")
@click.option("--include", multiple=True, type=click.Path(dir_okay=False), help="JSON output of doctor/probe/diagnose/profile to add as a section.")
def migrate(project, out, select, select_extend, ignore, ignore_extend, exclude, target, torch_npu, chip, config_file, no_config,
            cache_dir, no_cache, jobs, fail_on, unsafe_fixes, probe_spec, probe_inputs, no_doctor, include):
    """Scan PROJECT, write its migrated copy to OUT/project and a migration report to OUT/report/index.html.

    Takes the options of `scan` and `fix`.  Exit code as `fix`: 1 if a finding at or
    above --fail-on is left for a person after the fixes (or a file is missing from the
    copy), else 0.
    """
    settings = _settings((project,), select, select_extend, ignore, ignore_extend, exclude, target, torch_npu, chip, config_file, no_config, fail_on, unsafe_fixes)
    if is_within(out, project):
        raise AscendifyError(f"{out}: the output folder must be outside the project {project}")
    result = _run_scan((project,), settings, cache_dir, no_cache, jobs)
    for p, m in result.problems:
        click.echo(f"ascendify: {p}: {m}", err=True)
    migrated = os.path.join(out, "project")
    warning = stale_output_warning(migrated)
    if warning:
        click.echo(f"ascendify: warning: {warning}", err=True)
    report_dir = os.path.join(out, "report")
    run = fix_tree((project,), result, settings, "output", migrated, changelog=os.path.join(report_dir, "changes.csv"), jobs=jobs)
    report_fix_run(run)
    sections: dict[str, Any] = {}
    if no_doctor:
        sections["doctor"] = {"status": "not run", "reason": "--no-doctor given"}
    else:
        args = ["doctor", "--format", "json"] + (["--chip", chip] if chip else [])
        sections["doctor"] = _run_json_command(args, DOCTOR_TIMEOUT_S)
    if probe_spec:
        args = ["probe", probe_spec, "--format", "json"] + [a for spec in probe_inputs for a in ("--input", spec)]
        args += ["--torch-npu", settings.torch_npu] + (["--chip", chip] if chip else [])
        sections["probe"] = _run_json_command(args, PROBE_TIMEOUT_S)
    else:
        sections["probe"] = {"status": "not run", "reason": "no model given; pass --probe pkg.module:factory --input NAME:SHAPE:DTYPE"}
    sections.update(_includes(include))
    report = build_report(project, result, run, settings, sections, migrated_dir=migrated)
    try:
        index = render_site(report, report_dir)
    except OSError as exc:
        raise AscendifyError(f"{report_dir}: cannot write the report ({exc.strerror}); choose another --output folder")
    s = report["summary"]
    click.echo(f"scanned {s['files_scanned']} file(s): {s['findings']} finding(s), {s['fixed']} fixed automatically, {s['findings'] - s['fixed']} need a person")
    click.echo(f"migrated copy: {migrated}")
    click.echo(f"change log:    {os.path.join(report_dir, 'changes.csv')}")
    click.echo(f"report:        {index}")
    return _exit_code(run.remaining, settings.fail_on, result.problems + run.problems)


@click.command()
@click.argument("project", required=False, type=click.Path(exists=True, file_okay=False))
@click.option("--from", "from_json", type=click.Path(dir_okay=False, exists=True), default=None, help="Re-render an existing report.json (e.g. to add sections).")
@click.option("--include", multiple=True, type=click.Path(dir_okay=False), help="JSON output of doctor/probe/diagnose/profile to add as a section.")
@click.option("-o", "--output", "out", required=True, type=click.Path(file_okay=False), help="Folder for index.html and report.json.")
@click.option("--target", type=click.Choice(["npu", "agnostic"]), default=None)
@click.option("--torch-npu", "torch_npu", default=None, metavar="VERSION")
@click.option("--chip", default=None, metavar="SOC")
def report(project, from_json, include, out, target, torch_npu, chip):
    """Render the HTML report for PROJECT (scan only), or re-render --from report.json, adding --include sections."""
    if bool(project) == bool(from_json):
        raise AscendifyError("give either a PROJECT folder or --from report.json")
    if from_json:
        try:
            with open(from_json, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, json.JSONDecodeError) as exc:
            raise AscendifyError(f"{from_json}: not a readable report.json ({exc}); pass the file written by migrate")
        if doc.get("schema", "").split("/")[0] != "ascendify-report":
            raise AscendifyError(f"{from_json}: not an ascendify report (no 'schema': 'ascendify-report/…')")
        doc.setdefault("sections", {}).update(_includes(include))
    else:
        settings = _settings((project,), (), (), (), (), (), target, torch_npu, chip, None, False, "never")
        result = _run_scan((project,), settings, None, False, None)
        doc = build_report(project, result, None, settings, _includes(include))
    try:
        index = render_site(doc, out)
    except OSError as exc:
        raise AscendifyError(f"{out}: cannot write the report ({exc.strerror})")
    click.echo(f"report: {index}")
    return 0
