"""Ctrl-C (issue 22): every parallel command stops within 2 s of SIGINT, exits 130, prints one
line and leaves no process behind; a second Ctrl-C is immediate.

Each test starts ``ascendify`` in its own session and sends SIGINT to the whole process group,
as a terminal does on Ctrl-C, once its worker processes are running.  The bound asserted is 3 s
(the target is 2 s; the margin is for a loaded CI machine)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc") or sys.platform == "win32",
                                reason="needs POSIX process groups and /proc")

BOUND_S = 3.0
BODY = "import torch\n" + "".join(
    f"\n\ndef f{i}(x):\n    y = x.cuda()\n    z = torch.zeros(4, device='cuda')\n    torch.cuda.synchronize()\n    return y + z * {i}\n"
    for i in range(30))


# A terminal's foreground command has SIGINT at its default action. A suite started in the background by a
# non-interactive shell (`./.ci/run &`) inherits SIGINT ignored, and Python then installs no KeyboardInterrupt
# handler, so every command here would run to its end (exit 1, empty stderr). Reset it, then exec ascendify
# (same pid: the session leader stays the process the test signals).
AS_FOREGROUND = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                 "os.execv(sys.executable, [sys.executable, '-m', 'ascendify'] + sys.argv[1:])")


def _session(sid: int) -> list[int]:
    """Live (not zombie) processes of session ``sid`` other than its leader."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == sid:
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            out.append(int(d))
    return out


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("bigtree")
    for d in range(8):
        os.makedirs(root / f"pkg{d}")
        for j in range(100):
            (root / f"pkg{d}" / f"m{j}.py").write_text(BODY)
    return root


def _interrupt(args: list, cwd, twice: bool = False, started=None, settle: float = 0.5):
    env = dict(os.environ, NO_COLOR="1")
    p = subprocess.Popen([sys.executable, "-c", AS_FOREGROUND, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60 and p.poll() is None and not (started or _session)(p.pid):
            time.sleep(0.05)
        time.sleep(settle)  # 0: the workers are starting (initializer); 0.5: they are busy
        assert p.poll() is None, "the command finished before it could be interrupted (make the tree larger)"
        assert _session(p.pid), "no worker process started"
        t = time.monotonic()
        os.killpg(p.pid, signal.SIGINT)
        if twice:
            time.sleep(0.1)
            try:
                os.killpg(p.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
        try:
            err = p.communicate(timeout=30)[1].decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            pytest.fail("still running 30 s after SIGINT")
        elapsed = time.monotonic() - t
        deadline = time.monotonic() + 1.0
        left = _session(p.pid)
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = _session(p.pid)
        return p.returncode, elapsed, err, left
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        for pid in _session(p.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _assert_clean_stop(rc, elapsed, err, left, twice: bool = False):
    # a second Ctrl-C during the exit may end the process by SIGINT itself: the shell shows 130 as well
    assert rc == 130 or (twice and rc == -signal.SIGINT), (rc, err)
    assert elapsed < BOUND_S, f"took {elapsed:.2f} s after SIGINT"
    assert err.splitlines() == ["ascendify: interrupted"], err
    assert left == [], f"processes left behind: {left}"


@pytest.mark.parametrize("cmd", [
    ["scan", "--no-cache", "--jobs", "2", "."],
    ["fix", "--no-cache", "--jobs", "2", "."],
])
def test_ctrl_c_stops_a_parallel_command(big_tree, cmd):
    _assert_clean_stop(*_interrupt(cmd, big_tree))


def test_ctrl_c_while_workers_start(big_tree):
    _assert_clean_stop(*_interrupt(["scan", "--no-cache", "--jobs", "2", "."], big_tree, settle=0.0))


def test_second_ctrl_c_is_immediate(big_tree):
    _assert_clean_stop(*_interrupt(["scan", "--no-cache", "--jobs", "2", "."], big_tree, twice=True), twice=True)


def test_ctrl_c_during_fix_pool_leaves_no_temp_file(big_tree, tmp_path):
    """Interrupted while the fix workers write the migrated copy: no half-written temp file."""
    out = tmp_path / "copy"
    # a warm cache makes the scan instant, so SIGINT lands in the fix pool
    cache = tmp_path / "cache"
    subprocess.run([sys.executable, "-m", "ascendify", "scan", "--cache-dir", str(cache), "--fail-on", "never", "."],
                   cwd=big_tree, capture_output=True, check=True)
    _assert_clean_stop(*_interrupt(["migrate", "--cache-dir", str(cache), "--jobs", "2", ".", "--out-dir", str(out)],
                                   big_tree))
    # the copy is written under out (not the tree): both are looked through
    assert not [f for top in (big_tree, out) for _, _, fs in os.walk(top) for f in fs if f.startswith(".ascendify-")]


def test_ctrl_c_stops_probe_run(tmp_path):
    script = tmp_path / "loop.py"
    script.write_text("import time\nimport torch\nx = torch.ones(4)\nwhile True:\n    x = x + 1\n    time.sleep(0.01)\n")
    _assert_clean_stop(*_interrupt(["probe", "--run", str(script), "--max-seconds", "0"], tmp_path))
