"""``ascendify migrate`` and ``ascendify report``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import click

from ascendify.errors import AscendifyError
from ascendify.fix.run import fix_tree
from ascendify.fsutil import stale_output_warning
from ascendify.report.build import add_sections, build_report, load_section_file
from ascendify.report.html import render_site
from ascendify.fsutil import is_within
from ascendify.options import (chip_option, emit, emit_json, envelope, input_option, out_dir_option, project_options, project_settings,
                               report_options, split_output_dir, target_option, torch_npu_option)
from ascendify.scan.cli import _exit_code, _run_scan, problem_line, report_fix_run, target_line

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


def fit_section(project: str, chip) -> Any:
    """The fit table when the project's ``[tool.ascendify.fit]`` names a model factory
    (``ascendify.fit.hook``), a not-run record saying why it could not run, or None."""
    from ascendify.fit.hook import project_fit

    res = project_fit(project, chip=chip)
    if res is None:
        return None
    if "error" in res:
        return {"status": "not run", "reason": res["error"] + (f" (ran `{res['command_line']}`)" if res.get("command_line") else "")}
    return fit_display(res)


def fit_display(res: dict) -> dict:
    """A fit result (``ascendify fit --format json``) with what the report's fit section shows:
    ``table`` (one row per lever), ``peak_human``, ``margin_human``, ``factory``."""
    from ascendify.fit.hook import fit_rows
    from ascendify.fit.render import human

    out = dict(res)
    out["table"] = fit_rows(res)
    out["peak_human"] = human(res.get("peak_bytes") or 0)
    out["margin_human"] = human(abs(res.get("margin_bytes") or 0))
    out.setdefault("factory", res.get("target") or "")
    return out


def _includes(paths: tuple) -> dict[str, Any]:
    """``--include`` files by section, each recognised by its content; a file no ascendify
    command writes is an error (one line naming it, exit 2)."""
    out = {}
    for p in paths:
        try:
            name, data = load_section_file(p)
        except ValueError as exc:
            raise AscendifyError(str(exc))
        if name is None:  # a usage error, as any bad input (docs/cli.md): checked before anything runs or is written
            raise AscendifyError(f"{p}: not an ascendify result (the --format json output of doctor, probe, diagnose, profile, "
                                 "compare, export, fit, run or scan); pass one of those, or drop this --include")
        if name in ("report", "migrate"):
            click.echo(f"ascendify: warning: {p}: a {name} result, not a section; left out (re-render a report with --from)", err=True)
            continue
        if name in out:
            click.echo(f"ascendify: warning: {p}: a second {name} result; it replaces the first", err=True)
        if name == "fit" and isinstance(data, dict) and "table" not in data and data.get("rows") is not None:
            data = fit_display(data)  # the same table as migrate's own fit section
        out[name] = data
    return out


_include_option = click.option("--include", multiple=True, type=click.Path(dir_okay=False), metavar="FILE",
                               help="JSON output of doctor/probe/diagnose/profile/compare/fit to add as a section (recognised by its content).")
_OUT_HELP = ("Write this summary (text, or --format json) to FILE.  A value without a report "
             "suffix (.json, .txt, …) is taken as --out-dir (what -o used to mean), with a note.")


def _check_project(project: str, command: str) -> None:
    """A missing or non-folder PROJECT: the one-line error of every command (scan's wording), exit 2."""
    if not os.path.exists(project):
        raise AscendifyError(f"{project}: no such file or folder")
    if not os.path.isdir(project):
        raise AscendifyError(f"{project}: a file; `ascendify {command}` takes the project's folder")


@click.command()
@click.argument("project", type=click.Path())
@out_dir_option("Output folder: DIR/project (migrated copy) and DIR/report (HTML + JSON).")
@project_options
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that need review.")
@click.option("--probe", "probe_spec", default=None, metavar="MODULE:FACTORY", help="Also run `ascendify probe` on this model factory (with --input).")
@input_option("Probe input spec, e.g. x:2,3,32,32:float32 (repeatable).")
@click.option("--no-doctor", is_flag=True, help="Do not run `ascendify doctor`.")
@_include_option
@click.option("--verify", "verify_cmd", default=None, metavar="CMD",
              help="After migrating, run CMD (e.g. 'python train.py --steps 3') in the migrated copy under `ascendify run` "
                   "(an emulated Ascend host); the report shows the outcome; a failing run exits 1 (unless --fail-on never).")
@report_options(output_help=_OUT_HELP)
def migrate(project, out_dir, select, select_extend, ignore, ignore_extend, exclude, target, torch_npu, chip, config_file, no_config,
            cache_dir, no_cache, jobs, fail_on, unsafe_fixes, probe_spec, inputs, no_doctor, include, verify_cmd, fmt, output_file):
    """Scan PROJECT, write its migrated copy to DIR/project and a migration report to DIR/report/index.html.

    Takes the options of `scan` and `fix`.  Exit code as `fix`: 1 if a finding at or
    above --fail-on is left for a person after the fixes (or a file is missing from the
    copy), else 0.
    """
    _check_project(project, "migrate")
    output_file, out = split_output_dir(output_file, out_dir)
    if not out:
        raise AscendifyError("migrate needs an output folder: --out-dir DIR (the migrated copy and the report go there)")
    settings = project_settings((project,), select, select_extend, ignore, ignore_extend, exclude, target, torch_npu, chip, config_file, no_config, fail_on, unsafe_fixes)
    if is_within(out, project):
        raise AscendifyError(f"{out}: the output folder must be outside the project {project}")
    if settings.target == "agnostic":
        from ascendify.target import agnostic_torch_conflict

        conflict = agnostic_torch_conflict(project)
        if conflict:  # a copy that cannot import on the project's own torch
            raise AscendifyError(conflict)
    included = _includes(include)  # a bad --include fails before the scan and the copy
    result = _run_scan((project,), settings, cache_dir, no_cache, jobs, quiet=fmt != "text")
    for p, m in result.problems:
        click.echo(problem_line(p, m), err=True)
    migrated = os.path.join(out, "project")
    warning = stale_output_warning(migrated)
    if warning:
        click.echo(f"ascendify: warning: {warning}", err=True)
    report_dir = os.path.join(out, "report")
    from ascendify.deps import fix_tree as deps_fix_tree  # fix_tree plus the DEP fixes of dependency files

    run = deps_fix_tree((project,), result, settings, "output", migrated, changelog=os.path.join(report_dir, "changes.csv"), jobs=jobs)
    report_fix_run(run)
    sections: dict[str, Any] = {}
    if no_doctor:
        sections["doctor"] = {"status": "not run", "reason": "--no-doctor given"}
    else:
        args = ["doctor", "--format", "json"] + (["--chip", chip] if chip else [])
        sections["doctor"] = _run_json_command(args, DOCTOR_TIMEOUT_S)
    if probe_spec:
        args = ["probe", probe_spec, "--format", "json"] + [a for spec in inputs for a in ("--input", spec)]
        args += ["--torch-npu", settings.torch_npu] + (["--chip", chip] if chip else [])
        sections["probe"] = _run_json_command(args, PROBE_TIMEOUT_S)
    else:
        sections["probe"] = {"status": "not run", "reason": "no model given; pass --probe pkg.module:factory --input NAME:SHAPE:DTYPE"}
    fit = fit_section(project, settings.chip)
    if fit is not None:
        sections["fit"] = fit
    sections.update(included)
    verified = verify_section(verify_cmd, migrated, settings) if verify_cmd else None
    report = build_report(project, result, run, settings, sections, migrated_dir=migrated)
    if verified is not None:
        report["verify"] = verified
    try:
        index = render_site(report, report_dir)
    except OSError as exc:
        raise AscendifyError(f"{report_dir}: cannot write the report ({exc.strerror}); choose another --out-dir folder")
    s = report["summary"]
    paths = {"migrated_copy": migrated, "change_log": os.path.join(report_dir, "changes.csv"), "report": index}
    if fmt == "json":
        doc = {"summary": s, "paths": paths, "torch_npu": settings.torch_npu, "torch_npu_reason": settings.torch_npu_reason}
        if verified is not None:
            doc["verify"] = verified
        emit_json(envelope("migrate", doc), output_file)
    else:
        went = f"{s['settled']} went with those fixes (call sites of the fixed code), " if s.get("settled") else ""
        emit(f"scanned {s['files_scanned']} file(s): {s['findings']} finding(s), {s['fixed']} fixed automatically, {went}{s['open']} need a person\n"
             f"{target_line(settings)}\n"
             + (f"verified by running: {verified['summary']}\n" if verified is not None else "")
             + f"migrated copy: {migrated}\n"
             f"change log:    {paths['change_log']}\n"
             f"report:        {index}\n", output_file)
    code = _exit_code(run.remaining, settings.fail_on, result.problems + run.problems)
    if verified is not None and not verified.get("ok") and settings.fail_on != "never":
        code = max(code, 1)
    return code


def verify_section(cmd: str, migrated: str, settings) -> dict:
    """Run ``cmd`` in the migrated copy under ``ascendify run`` (the program's output goes to
    standard error) and summarise it for the report: ``{command, ok, exit_code, summary,
    first_failure, fallbacks, parameters, autocast, gradscaler, run}``; a command that cannot
    start is a failed verification with the reason."""
    import shlex

    from ascendify.run.cli import execute
    from ascendify.run.launch import LaunchError

    try:
        argv = shlex.split(cmd)
    except ValueError as exc:
        raise AscendifyError(f"--verify {cmd!r}: not a command line ({exc})")
    if not argv:
        raise AscendifyError("--verify needs a command, e.g. --verify 'python train.py --steps 3'")
    click.echo(f"== verifying the migrated copy: ascendify run -- {cmd}   (in {migrated})", err=True)
    try:
        doc = execute(argv, torch_npu=settings.torch_npu, chip=settings.chip, cwd=migrated, stdout=sys.stderr.fileno())
    except LaunchError as exc:
        return {"command": cmd, "cwd": migrated, "ok": False, "exit_code": exc.code, "summary": f"did not start: {exc}",
                "first_failure": None, "fallbacks": [], "parameters": None, "autocast": [], "gradscaler": None}
    first = doc.get("first_failure")
    params = doc.get("parameters") or {}
    ok = doc["exit_code"] == 0 and not params.get("loud")
    if doc["exit_code"] != 0:
        where = ""
        if first and first.get("user_frame"):
            uf = first["user_frame"]
            where = f" at {uf.get('path')}:{uf.get('line')}"
        what = f"{first['type']}: {first['message']}" if first else "no Python exception recorded"
        summary = f"exit {doc['exit_code']}: fails{where} ({' '.join(str(what).split())[:200]})"
    elif params.get("on") == "npu":
        summary = "exit 0: runs, parameters on the NPU"
    elif params.get("loud"):
        summary = "exit 0: runs, but " + params.get("message", "")
    else:
        summary = "exit 0: runs"
    if doc.get("fallbacks"):
        summary += f"; {len(doc['fallbacks'])} CPU fallback op(s)"
    if doc.get("dtype_findings"):
        summary += f"; {len(doc['dtype_findings'])} dtype finding(s)"
    return {"command": cmd, "cwd": migrated, "ok": ok, "exit_code": doc["exit_code"], "summary": summary,
            "first_failure": first, "fallbacks": doc.get("fallbacks", []), "dtype_findings": doc.get("dtype_findings", []),
            "parameters": params,
            "autocast": doc.get("autocast", []), "gradscaler": doc.get("gradscaler"), "emulated": doc.get("emulated"),
            "host_syncs": (doc.get("host_syncs") or {}).get("total", 0)}


@click.command()
@click.argument("project", required=False, type=click.Path())
@click.option("--from", "from_json", type=click.Path(), default=None, metavar="FILE", help="Re-render an existing report.json (e.g. to add sections).")
@_include_option
@out_dir_option("Folder for index.html and report.json.")
@target_option()
@torch_npu_option()
@chip_option()
@report_options(output_help="Write this summary (text, or --format json) to FILE.  A value without a report "
                            "suffix is taken as --out-dir (what -o used to mean), with a note.")
def report(project, from_json, include, out_dir, target, torch_npu, chip, fmt, output_file):
    """Render the HTML report for PROJECT (scan only), or re-render --from report.json, adding --include sections."""
    if project:
        _check_project(project, "report")
    if from_json and not os.path.isfile(from_json):
        raise AscendifyError(f"{from_json}: no such file or folder" if not os.path.exists(from_json)
                             else f"{from_json}: a folder; --from takes the report.json file migrate wrote")
    output_file, out = split_output_dir(output_file, out_dir)
    if not out:
        raise AscendifyError("report needs an output folder: --out-dir DIR (index.html and report.json go there)")
    if bool(project) == bool(from_json):
        raise AscendifyError("give either a PROJECT folder or --from report.json")
    included = _includes(include)
    if from_json:
        try:
            with open(from_json, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, json.JSONDecodeError) as exc:
            raise AscendifyError(f"{from_json}: not a readable report.json ({exc}); pass the file written by migrate")
        if doc.get("schema", "").split("/")[0] != "ascendify-report":
            raise AscendifyError(f"{from_json}: not an ascendify report (no 'schema': 'ascendify-report/…')")
        add_sections(doc, included)
    else:
        settings = project_settings((project,), (), (), (), (), (), target, torch_npu, chip, None, False, "never")
        result = _run_scan((project,), settings, None, False, None, quiet=fmt != "text")
        doc = build_report(project, result, None, settings, included)
    try:
        index = render_site(doc, out)
    except OSError as exc:
        raise AscendifyError(f"{out}: cannot write the report ({exc.strerror})")
    if fmt == "json":
        emit_json(envelope("report", {"report": index, "summary": doc.get("summary", {})}), output_file)
    else:
        emit(f"report: {index}\n", output_file)
    return 0
