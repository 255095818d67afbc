"""Set-up truth (issue 22): the README's Python floor, make test's torch index, the browser-skip note."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(name: str) -> str:
    with open(os.path.join(ROOT, name), encoding="utf-8") as fh:
        return fh.read()


def _torch_pin() -> str:
    m = re.search(r"^TORCH_VERSION\s*\?=\s*(\S+)", _read("Makefile"), re.M)
    assert m, "Makefile: no TORCH_VERSION"
    return m.group(1)


def test_readme_states_the_python_floor_of_make_test():
    """torch 2.13 has no wheel for Python 3.9: the quick start must not promise 3.9 for make test."""
    quick = _read("README.md").split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "Python 3.9+ and `make`" not in quick
    m = re.search(r"`make demo` and `make test` need Python 3\.(\d+)\+", quick)
    assert m, quick[:400]
    floor = int(m.group(1))
    assert "3.9" in quick and "pip install" in quick  # the core install still works on 3.9
    # the Makefile's guard stops make test below the same floor (checked with or without torch installed)
    assert f"sys.version_info < (3, {floor})" in _read("Makefile"), floor
    try:
        import importlib.metadata as md

        d = md.distribution("torch")
    except Exception:  # noqa: BLE001
        pytest.skip("torch not installed: its Requires-Python cannot be compared")
    if d.version.split("+")[0] != _torch_pin():
        pytest.skip(f"installed torch {d.version} is not the Makefile's {_torch_pin()}")
    req = d.metadata["Requires-Python"] or ""
    need = re.search(r">=\s*3\.(\d+)", req)
    assert need and int(need.group(1)) == floor, (req, floor)


def _make_n(*args: str) -> str:
    if not shutil.which("make"):
        pytest.skip("no make")
    r = subprocess.run(["make", "-n", "-B", "test", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_make_test_takes_torch_from_the_cpu_index_unless_a_local_wheel_has_it():
    out = _make_n()
    pin = _torch_pin()
    local = out.index(f'--no-index --no-deps "torch=={pin}"')
    cpu = out.index(f'"torch=={pin}" --index-url https://download.pytorch.org/whl/cpu')
    extras = out.index('-e ".[test,ml]"')
    assert local < cpu < extras, out
    assert "sys.version_info < (3, 10)" in out  # a clear message on Python 3.9, not a pip resolution error


def test_make_test_torch_index_can_be_turned_off():
    out = _make_n("TORCH_INDEX=")
    assert "--index-url" not in out


def test_make_test_says_when_the_browser_test_was_skipped(tmp_path):
    try:
        import playwright  # noqa: F401
        have_pw = True
    except ImportError:
        have_pw = False
    if have_pw and (shutil.which("chromium") or shutil.which("chromium-browser")):
        pytest.skip("a browser is installed here: the browser test runs")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/report/test_browser.py"],
                       cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert "skipped" in r.stdout
    note = [ln for ln in r.stdout.splitlines() if ln.startswith("NOTE: ") and "browser" in ln]
    assert len(note) == 1, r.stdout[-2000:]
    assert "not checked in a browser" in note[0] and ("chromium" in note[0] or "playwright" in note[0]), note[0]
