"""``ascendify run``: run a program on an emulated Ascend host, on this CPU, and say what happened."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from typing import Optional, Sequence

import click

from ascendify.errors import AscendifyError
from ascendify.options import check_writable, chip_option, emit, emit_json, envelope, report_options, torch_npu_option

DEFAULT_DEVICES = 8
"""``torch.npu.device_count()`` when ``--devices`` is not given (an 8-card Atlas host; a torchrun
``--nproc-per-node`` above it raises it)."""


def _msg(text: str) -> None:
    click.echo(f"ascendify: error: {text}", err=True)


def check_torch() -> str:
    """The installed torch version; AscendifyError (one line naming the supported range) when
    torch is missing or outside :data:`ascendify.run.boot.SUPPORTED_TORCH`."""
    from ascendify.run import boot

    try:
        return boot.check_torch()
    except AscendifyError as exc:
        msg = str(exc)
        raise AscendifyError(msg[len("ascendify run: "):] if msg.startswith("ascendify run: ") else msg) from None


def project_root_for(argv: Sequence[str], cwd: str) -> str:
    """The folder of the user's program: the working folder, unless the script lies outside it
    (then the script's folder)."""
    from ascendify.fsutil import is_within
    from ascendify.run.launch import python_entry

    script, _module = python_entry(argv)
    if script:
        full = os.path.abspath(os.path.join(cwd, script))
        if not is_within(full, cwd):
            return os.path.dirname(full)
    return cwd


def _project_chip(root: str) -> Optional[str]:
    from ascendify.config import find_config, load_settings

    cfg = find_config(root)
    if not cfg:
        return None
    try:
        return load_settings(cfg, {}).chip
    except AscendifyError:
        return None


def execute(command: Sequence[str], *, torch_npu: Optional[str] = None, chip: Optional[str] = None, devices: Optional[int] = None,
            mode: str = "auto", cwd: Optional[str] = None, project_root: Optional[str] = None, explain_failure: bool = True,
            stdout=None, cpu_rng: bool = False) -> dict:
    """Run ``command`` under the emulator and return the merged report (also used by
    ``migrate --verify``).  ``report["exit_code"]`` is the program's exit code.  Raises
    :class:`ascendify.run.launch.LaunchError` when the command cannot start and
    :class:`AscendifyError` for an unsupported torch or bad option.  ``stdout``: where the
    program's standard output goes (a file object or descriptor; default: ours)."""
    from ascendify.options import release_for
    from ascendify.run import report as rep
    from ascendify.run.launch import Supervisor, child_env, resolve_command, torchrun_nproc, write_config

    cwd = os.path.abspath(cwd or os.getcwd())
    check_torch()
    argv, notes = resolve_command(command, cwd)
    root = os.path.abspath(project_root or project_root_for(argv, cwd))
    release, reason = release_for(torch_npu, start=root)
    chip = chip or _project_chip(root)
    nproc = torchrun_nproc(argv)
    ndev = devices or max(DEFAULT_DEVICES, nproc or 0)
    tmp = tempfile.mkdtemp(prefix="ascendify-run-")
    try:
        events_dir = os.path.join(tmp, "events")
        os.makedirs(events_dir)
        config = {"torch_npu": release, "chip": chip, "devices": ndev, "mode": mode, "fallback_disabled": False,
                  "events_dir": events_dir, "project_root": root, "cpu_rng": bool(cpu_rng)}
        config_path = os.path.join(tmp, "config.json")
        write_config(config_path, config)
        sup = Supervisor(argv, child_env(config_path), cwd=cwd, stdout=stdout)
        code = sup.run()
        events = rep.load_events(events_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    emulated = {"torch_npu": release, "torch_npu_reason": reason, "chip": chip or "Ascend910B3", "devices": ndev, "mode_requested": mode,
                "cpu_rng": bool(cpu_rng)}
    starts = [e for evs in events.values() for e in evs if e.get("kind") == "start"]
    used = starts[0].get("torch_npu") if starts else None
    if used and used != release and not used.startswith(release + ".post"):
        from ascendify.kb.ops import resolve_release

        try:  # the KB's own words: 9.9.9 is not in it, and which known release is used instead
            note = resolve_release(release)[1]
        except ValueError:
            note = None
        emulated["release_note"] = note or f"torch_npu {release} requested; the emulator used the KB of {used}"
    if used:
        emulated["torch_npu"] = used
    if starts and starts[0].get("chip"):
        emulated["chip"] = starts[0]["chip"]
    doc = rep.build(events, exit_code=code, command=argv, cwd=cwd, project_root=root, emulated=emulated,
                    interrupted=sup.interrupted, notes=notes)
    doc["command_display"] = list(command)
    doc["stopped_processes"] = sup.stopped
    if doc["first_failure"] and explain_failure and not sup.interrupted:
        doc["first_failure"]["explained"] = rep.explain(doc["first_failure"], root, release, chip)
    return doc


def _write_report(path: str, doc: dict) -> None:
    from ascendify.fsutil import atomic_write

    try:
        atomic_write(path, (json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n").encode("utf-8"))
    except OSError as exc:
        raise AscendifyError(f"{path}: cannot write the report ({exc.strerror}); choose another --report file")


@click.command("run", context_settings={"allow_interspersed_args": False})
@torch_npu_option("Emulate this torch_npu release, e.g. 2.1.0 or 2.7.1 (default: [tool.ascendify] torch-npu, else from "
                  "the project's pinned torch, else the recommended release).")
@chip_option("Emulated soc_version, e.g. Ascend910B3 (default: [tool.ascendify] chip, else Ascend910B3).")
@click.option("--devices", type=click.IntRange(1, 64), default=None, metavar="N",
              help=f"NPUs the host has: torch.npu.device_count() (default {DEFAULT_DEVICES}, or torchrun's --nproc-per-node if larger).")
@click.option("--mode", type=click.Choice(["auto", "shim", "python"]), default="auto", show_default=True,
              help="shim: a real PrivateUse1 backend (a C++ shim built once with the C++ compiler); python: a pure-Python "
                   "tensor subclass (no compiler; says what it cannot emulate); auto: shim when a compiler works.")
@click.option("--cpu-rng", is_flag=True, default=False,
              help="One RNG stream: random ops on npu tensors (dropout, init, noise) draw from the CPU default generator "
                   "and torch.npu's seeding is a no-op, so they match a plain CPU run of the original (for comparisons; "
                   "a card has its own generator per device).")
@click.option("--report", "report_file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the JSON report (every rank, merged) to FILE, whatever --format says.")
@report_options(output_help="Write the summary to this file instead of the terminal (text goes to standard error by "
                            "default, so the program's standard output stays its own).")
@click.argument("command", nargs=-1, required=False, type=click.UNPROCESSED, metavar="-- COMMAND [ARGS]")
def run(torch_npu, chip, devices, mode, cpu_rng, report_file, fmt, output_file, command):
    """Run COMMAND on an emulated Ascend host, on this CPU, as it would run with that torch_npu release.

    COMMAND is a script (`train.py ARGS`), `python ...`, `python -m MODULE ...`, `torchrun ...` or any
    command; every Python process it starts is emulated: CUDA is absent, `npu` is a real device type
    and every aten op is judged by the op KB of the release (CPU fallbacks, dtype limits).  The
    program's output is passed through; at the end run says how it ended: the first failure with
    the user's own frame and the scan rule that explains it, CPU fallbacks, autocast, GradScaler,
    host syncs and the device the parameters ended on.  Exit code: the program's (127 command not
    found, 126 not executable, 130 Ctrl-C); 2 for run's own errors.
    """
    from ascendify.run.launch import LaunchError

    cmd = list(command)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise click.UsageError("no command to run; e.g. ascendify run -- python train.py --steps 3", ctx=click.get_current_context())
    for path, option in ((report_file, "--report"), (output_file, "-o")):
        if path and path != "-":
            check_writable(path, option)  # before the program runs: its result must not be lost at the end
    try:
        doc = execute(cmd, torch_npu=torch_npu, chip=chip, devices=devices, mode=mode, cpu_rng=cpu_rng)
    except LaunchError as exc:
        if exc.code == 2:
            raise AscendifyError(str(exc)) from None
        _msg(str(exc))
        return exc.code
    out = envelope("run", doc)
    if report_file:
        _write_report(report_file, out)
    if doc["interrupted"]:
        n = doc.get("stopped_processes") or 0
        click.echo(f"ascendify: run: interrupted; stopped `{' '.join(cmd)}`"
                   + (f" ({n} process(es) had not exited after Ctrl-C and were killed)" if n else "") + f" (exit {doc['exit_code']})", err=True)
        return doc["exit_code"]
    if fmt == "json":
        emit_json(out, output_file)
    else:
        from ascendify.run.report import render_text

        text = render_text(doc)
        if output_file:
            emit(text, output_file)
        else:
            click.echo(text, nl=False, err=True)
    return doc["exit_code"]
