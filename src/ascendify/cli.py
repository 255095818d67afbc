"""The ``ascendify`` command line.

Every command is loaded lazily from its capability package (``LAZY_COMMANDS``) so start-up
stays fast; the options they share are declared once in ``ascendify.options`` (docs/cli.md).
Exit codes: 0 clean, 1 findings at or above ``--fail-on``, 2 usage or internal error, 130 Ctrl-C
(``ascendify.procutil`` stops worker pools at once).
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from typing import Optional

import click

from ascendify import __version__
from ascendify.errors import AscendifyError

LAZY_COMMANDS = {
    "scan": ("ascendify.scan.cli", "scan", "Find everything in a project that must change for Ascend NPU."),
    "fix": ("ascendify.scan.cli", "fix", "Rewrite what can be rewritten safely (diff by default; --write, --out-dir)."),
    "rules": ("ascendify.scan.cli", "rules_cmd", "List every rule: code, severity, auto-fix, name."),
    "rule": ("ascendify.scan.cli", "rule_cmd", "Show one rule's page."),
    "ops": ("ascendify.ops_cli", "ops", "Look up NPU support for an aten op or torch API, per torch_npu release."),
    "probe": ("ascendify.probe.cli", "probe", "Run a model or script on the CPU and classify every aten op it dispatches."),
    "doctor": ("ascendify.doctor.cli", "doctor", "Check the torch / torch_npu / CANN / driver / chip stack."),
    "diagnose": ("ascendify.diagnose.cli", "diagnose", "Find the cause and fix of errors in NPU logs."),
    "profile": ("ascendify.profile.cli", "profile", "Read a torch_npu profiler folder: slow ops, AI_CPU, step time."),
    "fit": ("ascendify.fit.cli", "fit", "Predict a training step's NPU memory on fake tensors: fits the chip, levers."),
    "export": ("ascendify.export.cli", "export", "Export ONNX for ATC and print the matching atc command."),
    "baseline": ("ascendify.compare.cli", "baseline", "Record PyTorch or ONNX outputs over a data folder."),
    "compare": ("ascendify.compare.cli", "compare", "Compare outputs against a baseline (cosine similarity, errors)."),
    "migrate": ("ascendify.report.cli", "migrate", "Scan, fix into a copy, and write an HTML migration report."),
    "report": ("ascendify.report.cli", "report", "Render an HTML report from JSON results."),
    "run": ("ascendify.run.cli", "run", "Run a program on an emulated Ascend host (this CPU): where it fails, CPU fallbacks, AMP."),
}


EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C: 128 + SIGINT, as shells report it."""


class Interrupted(Exception):
    """Ctrl-C inside a command, passed past click (which would print a blank line and 'Aborted!')."""


class AscendifyGroup(click.Group):
    """A group whose extra commands are imported only when used."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted() from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))

    def get_command(self, ctx: click.Context, name: str) -> Optional[click.Command]:
        cmd = super().get_command(ctx, name)
        if cmd is not None or name not in LAZY_COMMANDS:
            return cmd
        module, attr, help_text = LAZY_COMMANDS[name]
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            if os.environ.get("ASCENDIFY_DEBUG"):
                raise
            reason = f"{type(exc).__name__}: {exc}"

            @click.command(name, help=help_text, context_settings={"ignore_unknown_options": True})
            @click.argument("args", nargs=-1, type=click.UNPROCESSED)
            def unavailable(args: tuple) -> None:
                raise AscendifyError(f"'ascendify {name}' is not available in this installation ({reason}); reinstall ascendify")

            return unavailable

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in LAZY_COMMANDS:
                rows.append((name, LAZY_COMMANDS[name][2]))
            else:
                cmd = super().get_command(ctx, name)
                rows.append((name, cmd.get_short_help_str(70) if cmd else ""))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=AscendifyGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="ascendify")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Move a CUDA PyTorch project to Huawei Ascend NPUs (torch_npu + CANN).

    Start with `ascendify scan PATH`, then `ascendify fix PATH` (prints the diff; --write or
    --out-dir DIR to apply), or `ascendify migrate PATH --out-dir DIR` for both and a report.
    """
    if ctx.invoked_subcommand is None:  # bare `ascendify`: the help on stdout, exit 0 (as git and ruff do)
        click.echo(ctx.get_help())
        ctx.exit(0)


def usage_error(exc: click.UsageError) -> int:
    """Print a usage error as one line naming the command and where its help is; return 2."""
    ctx = exc.ctx
    path = ctx.command_path if ctx is not None else "ascendify"
    click.echo(f"ascendify: error: {exc.format_message()} (see `{path} --help`)", err=True)
    return exc.exit_code if isinstance(exc.exit_code, int) else 2


def _interrupted(console: bool = False) -> None:
    """After Ctrl-C: one line, exit 130.  A further Ctrl-C from here on ends the process at once
    (the default action: the shell shows 130 too), never with a traceback.

    From the console entry point the process ends with ``os._exit`` once the line is out: the worker
    pools are already stopped (ascendify.procutil), and interpreter shutdown would run
    concurrent.futures' exit hook on a pool whose wake-up pipe is closed, which can print an
    "Exception ignored ... Bad file descriptor" traceback after the one line (seen under load)."""
    import signal

    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    except ValueError:  # not the main thread (in-process callers)
        pass
    click.echo("ascendify: interrupted", err=True)
    if console:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(EXIT_INTERRUPTED)
    sys.exit(EXIT_INTERRUPTED)


def main(argv: Optional[list[str]] = None) -> None:
    """Console-script entry point: one-line errors, never a traceback (exit 2)."""
    try:
        rc = cli.main(args=argv, prog_name="ascendify", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.UsageError as exc:  # one line, like every other error (docs/cli.md)
        sys.exit(usage_error(exc))
    except click.ClickException as exc:
        click.echo(f"ascendify: error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except (Interrupted, KeyboardInterrupt):  # worker pools stop themselves (ascendify.procutil)
        _interrupted(console=argv is None)
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):
            _interrupted(console=argv is None)
        click.echo("ascendify: aborted", err=True)
        sys.exit(2)
    except AscendifyError as exc:
        click.echo(f"ascendify: error: {exc}", err=True)
        sys.exit(2)
    except BrokenPipeError:
        sys.exit(2)
    except ModuleNotFoundError as exc:  # an optional dependency (torch, onnx, …) of one command
        if os.environ.get("ASCENDIFY_DEBUG"):
            traceback.print_exc()
        click.echo(f"ascendify: error: this command needs the Python package {exc.name!r}, which is not installed; "
                   f"install it (e.g. `pip install 'ascendify[ml]' torch`)", err=True)
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - last line of defence
        if os.environ.get("ASCENDIFY_DEBUG"):
            traceback.print_exc()
        click.echo(
            f"ascendify: internal error: {type(exc).__name__}: {exc} "
            "(please report it; rerun with ASCENDIFY_DEBUG=1 for the traceback)",
            err=True,
        )
        sys.exit(2)
    sys.exit(rc if isinstance(rc, int) else 0)

