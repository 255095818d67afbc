"""A worker stopped by worker_pool prints nothing: whatever its exit writes to standard error (a
task's ``finally`` block, multiprocessing's "Process ForkProcess-N:" and traceback) would follow the
CLI's one line "ascendify: interrupted" (a CI run of test_cli_interrupt showed such a line)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SCRIPT = r"""
import sys, time
from ascendify.procutil import worker_pool

def task(_):
    try:
        time.sleep(20)
    finally:
        sys.stderr.write("worker noise after SIGTERM\n")
        sys.stderr.flush()

if __name__ == "__main__":
    try:
        with worker_pool(1, grace=5.0) as ex:
            ex.submit(task, 0)
            time.sleep(1.0)  # the task is sleeping in the worker
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        sys.stderr.write("parent: stopped\n")
"""


def test_a_stopped_worker_writes_nothing_to_standard_error(tmp_path):
    script = tmp_path / "stop.py"
    script.write_text(SCRIPT)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stderr.splitlines() == ["parent: stopped"], p.stderr
