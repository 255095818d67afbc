"""Running a program in a fresh process on the emulated host (activation is process-global), for the
tests/run/test_emu_*.py files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Optional

import pytest

from ascendify.run import SITE_DIR

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "emu_programs")
ROOT = os.path.dirname(os.path.dirname(HERE))
MODES = ("shim", "python")


def shim_cache() -> str:
    """The shim is built once per torch version into the user cache (or $ASCENDIFY_CACHE_DIR), so test
    sessions after the first load it in milliseconds."""
    return os.environ.get("ASCENDIFY_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "ascendify")


@pytest.fixture(scope="session")
def shim_built():
    os.environ.setdefault("ASCENDIFY_CACHE_DIR", shim_cache())
    from ascendify.run import shim

    if not shim.can_build() and not shim.cached_library():
        pytest.fail("mode shim needs g++ and ninja here (both are part of the test environment)")
    return shim.build()


class Result:
    def __init__(self, proc: subprocess.CompletedProcess, events_dir: str):
        self.proc = proc
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr
        self.events = []
        for name in sorted(os.listdir(events_dir)) if os.path.isdir(events_dir) else ():
            with open(os.path.join(events_dir, name), encoding="utf-8") as fh:
                self.events += [json.loads(line) for line in fh if line.strip()]

    def kind(self, kind: str) -> list:
        return [e for e in self.events if e["kind"] == kind]

    def line(self, prefix: str) -> str:
        for ln in self.out.splitlines():
            if ln.startswith(prefix):
                return ln[len(prefix):].strip()
        raise AssertionError(f"no {prefix!r} line in the output:\n{self.out}\n{self.err[-3000:]}")


def emu_env(tmp_path, mode: str, extra_env: Optional[dict] = None, **cfg) -> "tuple[dict, str]":
    events_dir = str(tmp_path / f"events-{mode}-{len(os.listdir(tmp_path))}")
    conf = {"torch_npu": "2.7.1", "chip": "Ascend910B3", "devices": 4, "mode": mode, "events_dir": events_dir,
            "project_root": PROGRAMS}
    conf.update(cfg)
    path = str(tmp_path / f"cfg-{mode}-{len(os.listdir(tmp_path))}.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(conf, fh)
    env = dict(os.environ)
    env.pop("TORCH_NPU_FALLBACK_CPU_DISABLE", None)
    env["ASCENDIFY_RUN_CONFIG"] = path
    env["ASCENDIFY_CACHE_DIR"] = shim_cache()
    env["PYTHONPATH"] = os.pathsep.join([SITE_DIR, os.path.join(ROOT, "src")] +
                                        [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["OMP_NUM_THREADS"] = "1"
    env.pop("ASCENDIFY_RUN_SAID_LIMITS", None)
    if extra_env:
        env.update(extra_env)
    return env, events_dir


def run_emu(tmp_path, program: str, *args: str, mode: str = "shim", extra_env: Optional[dict] = None,
            timeout: int = 120, **cfg) -> Result:
    env, events_dir = emu_env(tmp_path, mode, extra_env, **cfg)
    proc = subprocess.run([sys.executable, os.path.join(PROGRAMS, program), *args], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=timeout)
    return Result(proc, events_dir)


def run_plain(tmp_path, code_or_program: str, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """A plain Python process (no emulator), as on a machine without torch_npu."""
    env = {k: v for k, v in os.environ.items() if k not in ("ASCENDIFY_RUN_CONFIG",)}
    env["OMP_NUM_THREADS"] = "1"
    cmd = [sys.executable, os.path.join(PROGRAMS, code_or_program)] if code_or_program.endswith(".py") else \
        [sys.executable, "-c", code_or_program]
    return subprocess.run(cmd + list(args), env=env, cwd=str(tmp_path), capture_output=True, text=True,
                          timeout=timeout)


def line_of(program: str, marker: str) -> int:
    with open(os.path.join(PROGRAMS, program), encoding="utf-8") as fh:
        for i, ln in enumerate(fh, 1):
            if marker in ln:
                return i
    raise AssertionError(marker)
