"""Throughput and memory of `ascendify diagnose` on large synthetic logs.

Default (``--scaling 10,100``): writes a *noisy* log of 10 MB and one of 100 MB
(torchrun-prefixed ranks, JSON-lines and HF-dict metrics, torch warnings with
library paths, tracebacks, CANN error blocks, plog lines), diagnoses each in a
child process and prints time per MB and peak RSS for both, with the ratios
100 MB / 10 MB: linear time means a time-per-MB ratio near 1, bounded memory a
peak-RSS ratio near 1.  First row: the load time of the known-issue index
(target < 100 ms).  ``--size N`` keeps the older single-log run (ordinary
training lines, default 1 GiB) against a plain line-reading baseline.  Nothing
is asserted (speed depends on the machine).

    .venv/bin/python bench/diagnose_bench.py                 # 10 MB and 100 MB noisy logs
    .venv/bin/python bench/diagnose_bench.py --scaling 10,50,200
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


NOISY = [
    "[rank{r}]:2026-05-01 10:{m:02d}:{s:02d},{ms:03d} INFO train.py:212 step {n} loss 2.{n4:04d} lr 3.0e-04 grad_norm 1.0{d}",
    '{{"step": {n}, "loss": 2.{n4:04d}, "grad_norm": 0.9{d}, "loss_scale": 65536.0, "learning_rate": 3e-05}}',
    "{{'loss': 1.{n4:04d}, 'grad_norm': 1.{d}, 'learning_rate': 2e-05, 'epoch': 0.{n4:04d}}}",
    "[rank{r}]:/opt/venv/lib/python3.10/site-packages/torch/nn/modules/module.py:1518: UserWarning: torch.npu.amp.autocast "
    "is deprecated, use torch.amp.autocast('npu') (triggered internally at torch_npu/csrc/aten/common/FormatCastKernelNpu.cpp:9)",
    "[INFO] RUNTIME(4242,python3):2026-05-01-10:{m:02d}:{s:02d}.{ms:03d}.001 [stream.cc:188]4250 StreamSync: stream {n} done",
    "[rank{r}]: iteration {n:8d}/ 1000000 | consumed samples: {n:10d} | lm loss: 2.3{d}E+00 | loss scale: 65536.0 | grad norm: 1.{d} |",
    "[default{r}]:  0%|          | {n}/1000000 [00:{s:02d}<99:00:00,  1.2it/s]",
]
NOISY_RARE = [
    "[rank{r}]:Traceback (most recent call last):\n"
    '[rank{r}]:  File "/home/u/proj/train.py", line 141, in <module>\n'
    "[rank{r}]:    main()\n"
    '[rank{r}]:  File "/opt/venv/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 630, in __next__\n'
    "[rank{r}]:    data = self._next_data()\n"
    "[rank{r}]:KeyError: 'sample_{n4}'",
    "[ERROR] 2026-05-01-10:{m:02d}:{s:02d} (PID:4242, Device:0, RankID:{r}) ERR01100 OPS call acl api failed\n"
    "EZ1001: [PID: 4242] 2026-05-01-10:{m:02d}:{s:02d}.100.200 Tensor self not implemented for DT_DOUBLE, should be in dtype "
    "support list [DT_FLOAT,DT_FLOAT16].\n"
    "        TraceBack (most recent call last):\n"
    "        Not support dtype.",
    "CAUTION: The operator 'aten::op_{n4}' is not currently supported on the NPU backend and will fall back to run on the CPU.",
]


def write_noisy(path: str, size_mb: int) -> int:
    """A noisy log of ``size_mb`` MB (10**6 bytes); returns the number of lines."""
    target = size_mb * 10**6
    n = lines = written = 0
    with open(path, "w", encoding="utf-8") as fh:
        while written < target:
            chunk = []
            for _ in range(5000):
                n += 1
                f = dict(r=n % 8, m=(n // 60) % 60, s=n % 60, ms=n % 1000, n=n, n4=n % 10000, d=n % 10)
                if n % 20011 == 0:
                    line = NOISY_RARE[(n // 20011) % len(NOISY_RARE)].format(**f)
                else:
                    line = NOISY[n % len(NOISY)].format(**f)
                chunk.append(line)
            text = "\n".join(chunk) + "\n"
            lines += text.count("\n")
            fh.write(text)
            written += len(text)
        fh.write(OOM + "\n")
    return lines + 1


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


def scaling(sizes: list) -> None:
    tmpdir = tempfile.mkdtemp(prefix="ascendify-bench-")
    rows = []
    try:
        for mb in sizes:
            path = os.path.join(tmpdir, f"noisy_{mb}.log")
            lines = write_noisy(path, mb)
            size = os.path.getsize(path)
            bt, brss = child(CHILD_BASELINE, path)
            dt, drss, nfind, first, nlines = child(CHILD_DIAGNOSE, path)
            os.remove(path)
            rows.append((mb, size, float(dt), int(drss) / 1024, float(bt), int(brss) / 1024, int(nfind), first, lines, int(nlines)))
            print(f"{size / 1e6:7.1f} MB, {lines:,} lines: diagnose {float(dt):7.2f} s = {float(dt) / (size / 1e6) * 1000:6.1f} ms/MB, "
                  f"peak RSS {int(drss) / 1024:6.1f} MiB; baseline read {float(bt) / (size / 1e6) * 1000:5.1f} ms/MB, "
                  f"RSS {int(brss) / 1024:5.1f} MiB; findings {nfind}, first {first}, lines counted {int(nlines):,}")
    finally:
        try:
            os.rmdir(tmpdir)
        except OSError:
            pass
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        per_a, per_b = a[2] / a[1], b[2] / b[1]
        print(f"ratio {b[0]} MB / {a[0]} MB: time per MB {per_b / per_a:.2f}x (1.00 = linear), "
              f"peak RSS {b[3] / a[3]:.2f}x (1.00 = bounded)")


CHILD_KI_LOAD = """
import sys, time
t0 = time.perf_counter()
from ascendify.diagnose import known_issues as ki
t1 = time.perf_counter()
idx = ki.load()
t2 = time.perf_counter()
idx.search(["EZ9999: The parameter 'actual_seq_lengths' must be configured in ascending order"])
t3 = time.perf_counter()
fresh = idx.data.get("sources") == ki.sources_hash(ki.data_files())
print(t2 - t1, t3 - t2, len(idx.records), int(fresh))
"""


def known_issue_row() -> None:
    """Load time of the known-issue index (lazily loaded on diagnose's first query), in a fresh process."""
    try:
        load_s, query_s, n, fresh = child(CHILD_KI_LOAD, "-")
    except subprocess.CalledProcessError:
        print("known-issue index: not in this version of ascendify")
        return
    print(f"known-issue index: {int(n)} records, load {float(load_s) * 1000:.1f} ms (target < 100 ms), first query "
          f"{float(query_s) * 1000:.1f} ms" + ("" if int(fresh) else " — index stale, built in memory: run tools/diagnose_known_issues.py"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=None, help="single-log mode: log size in MiB (e.g. 1024)")
    ap.add_argument("--scaling", default="10,100", help="noisy logs of these sizes in MB (default 10,100)")
    ap.add_argument("--keep", default=None, help="single-log mode: write the log here and keep it")
    a = ap.parse_args()
    if a.size is None and a.keep is None:
        known_issue_row()
        scaling([int(x) for x in a.scaling.split(",") if x.strip()])
        return
    a.size = a.size or 1024
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
