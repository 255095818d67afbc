"""Throughput and memory of `ascendify diagnose` on a large synthetic log.

Writes a log of --size MiB (default 1024 = 1 GiB) made of ordinary training
lines with a few known errors, then in separate child processes measures

* a baseline: reading the file line by line in Python and doing nothing;
* `diagnose` on the same file;

and prints wall time, MB/s, peak RSS of each child, and the ratio to the
baseline.  Nothing is asserted (speed depends on the machine).

    .venv/bin/python bench/diagnose_bench.py            # 1 GiB
    .venv/bin/python bench/diagnose_bench.py --size 200 --keep /tmp/x.log
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

LINES = [
    "2026-05-01 10:00:{s:02d},{ms:03d} INFO train.py:212 step {n} loss 2.{n4:04d} lr 3.0e-04 tokens/s 81234.5 grad_norm 1.02",
    "[rank{r}]: 2026-05-01 10:00:{s:02d} | iteration {n} | consumed samples {n} | elapsed time per iteration (ms): 512.3",
    "2026-05-01 10:00:{s:02d},{ms:03d} DEBUG data.py:88 batch shapes [8, 2048] dtype int64 pinned True",
]
ERRORS = [
    "CAUTION: The operator 'aten::unique_consecutive' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications.",
    "[ERROR] HCCL(4243,python3):2026-05-01-10:35:48.123.456 [notify.cc:12]4250 EI0002: The wait execution of the Notify register times out.",
]
OOM = ("RuntimeError: NPU out of memory. Tried to allocate 260.00 MiB (NPU 0; 28.50 GiB total capacity; 10.24 GiB already allocated; "
       "10.24 GiB current active; 149.57 MiB free; 10.28 GiB reserved in total by PyTorch)")


def write_log(path: str, size_mib: int) -> int:
    target = size_mib << 20
    n = 0
    written = 0
    with open(path, "w", encoding="utf-8") as fh:
        while written < target:
            chunk = []
            for _ in range(10000):
                n += 1
                if n % 50000 == 0:
                    line = ERRORS[(n // 50000) % 2]
                else:
                    line = LINES[n % 3].format(s=n % 60, ms=n % 1000, n=n, n4=n % 10000, r=n % 8)
                chunk.append(line)
            text = "\n".join(chunk) + "\n"
            fh.write(text)
            written += len(text)
        fh.write(OOM + "\n")
    return n + 1


CHILD_BASELINE = """
import sys, time, resource
t = time.perf_counter()
with open(sys.argv[1], 'rb') as fh:
    for line in fh:
        pass
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

CHILD_DIAGNOSE = """
import sys, time, resource
from ascendify.diagnose.engine import diagnose
t = time.perf_counter()
rep = diagnose((sys.argv[1],))
dt = time.perf_counter() - t
print(dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(rep.findings), rep.findings[0].id, sum(s.lines for s in rep.files))
"""


def child(code: str, path: str) -> list:
    out = subprocess.run([sys.executable, "-c", code, path], check=True, capture_output=True, text=True).stdout.split()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024, help="log size in MiB (default 1024)")
    ap.add_argument("--keep", default=None, help="write the log here and keep it")
    a = ap.parse_args()
    tmpdir = None
    path = a.keep
    if path is None:
        tmpdir = tempfile.mkdtemp(prefix="ascendify-bench-")
        path = os.path.join(tmpdir, "rank_0.log")
    try:
        t = time.perf_counter()
        lines = write_log(path, a.size)
        size = os.path.getsize(path)
        print(f"log: {path}: {size / 2**20:,.0f} MiB, {lines:,} lines (written in {time.perf_counter() - t:.1f} s)")
        bt, brss = child(CHILD_BASELINE, path)
        dt, drss, nfind, first, nlines = child(CHILD_DIAGNOSE, path)
        bt, dt = float(bt), float(dt)
        mb = size / 1e6
        print(f"baseline (read lines, no work): {bt:7.2f} s  {mb / bt:8.1f} MB/s  peak RSS {int(brss) / 1024:7.1f} MiB")
        print(f"ascendify diagnose:             {dt:7.2f} s  {mb / dt:8.1f} MB/s  peak RSS {int(drss) / 1024:7.1f} MiB")
        print(f"ratio diagnose / baseline time: {dt / bt:.2f}x")
        print(f"findings: {nfind}, first: {first}, lines counted: {int(nlines):,} (expected {lines:,})")
    finally:
        if tmpdir:
            try:
                os.remove(path)
                os.rmdir(tmpdir)
            except OSError:
                pass


if __name__ == "__main__":
    main()
