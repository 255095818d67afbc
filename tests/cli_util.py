"""Run the CLI in-process and capture stdout, stderr and the exit code."""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass


@dataclass
class Run:
    code: int
    out: str
    err: str


def run_cli(*args: str, cwd: str | None = None) -> Run:
    from ascendify.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    code = 0
    try:
        if cwd:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        os.chdir(old)
    return Run(code, out.getvalue(), err.getvalue())
