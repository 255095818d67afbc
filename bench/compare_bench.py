"""Throughput of `ascendify compare` on float32 outputs vs a plain numpy read of the same files.

Writes a baseline and a candidate folder of .npy files (default 2 GB in total,
both sides together) into a temporary folder, warms the page cache, then
measures in this one run:

* numpy read: ``np.load`` of every file (full read into memory, one file at a time);
* compare: ``compare_collections`` with every metric (a min/max range pass for KL,
  then one data pass), with ``--metric`` monitors that need no KL (one pass), and with
  2 worker threads (``--jobs 2``, the CLI default on a 2-core machine).

Each measurement runs in a fresh child process that also reports its peak RSS
(VmHWM, which counts mapped file pages too), to show memory stays bounded
(streamed in chunks, never the whole data set; with KL each file of up to 256 MiB
stays mapped for both passes, so the peak includes one pair of files per worker).
The modes run in rounds (``--repeat``, interleaved, so machine noise hits all of
them alike); each round's ratio is taken against that round's numpy read.
Prints the median seconds, GB/s and the median ratio to the numpy read
(target: >= 0.5) with the per-round ratios; asserts nothing.  The CPU columns
(user + system seconds of the child, and numpy's CPU seconds over the mode's)
show the cost independent of how busy the machine is; with 2 threads the wall
ratio can exceed the CPU ratio.

With numba installed the compare modes use the fused numba kernels; ``--numpy-path``
also times them with ``ASCENDIFY_COMPARE_NUMBA=0`` (the numpy path) in the same rounds,
as the ``numpy-path:`` rows.  The ``kernel`` column says which path each mode ran.

    .venv/bin/python bench/compare_bench.py [--gb 2.0] [--files 16] [--repeat 3] [--dir /tmp] [--before-src OLD/src]
        [--numpy-path]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def write_data(root: str, total_gb: float, files: int) -> int:
    per_side = int(total_gb * 1e9 / 2)
    n = per_side // 4 // files
    rng = np.random.default_rng(0)
    block = rng.standard_normal(1 << 22).astype(np.float32)
    noise = (rng.standard_normal(1 << 22) * 1e-3).astype(np.float32)
    for side in ("base", "cand"):
        os.makedirs(os.path.join(root, side), exist_ok=True)
    total = 0
    for i in range(files):
        for side in ("base", "cand"):
            path = os.path.join(root, side, f"s{i:03d}.npy")
            mm = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n,))
            for j in range(0, n, block.size):
                k = min(block.size, n - j)
                mm[j:j + k] = block[:k] if side == "base" else block[:k] + noise[:k]
            mm.flush()
            del mm
            total += os.path.getsize(path)
    return total


def child(mode: str, root: str) -> None:
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = ru0.ru_utime + ru0.ru_stime
    t0 = time.perf_counter()
    if mode == "numpy":
        acc = 0.0
        for side in ("base", "cand"):
            d = os.path.join(root, side)
            for f in sorted(os.listdir(d)):
                a = np.load(os.path.join(d, f))
                acc += float(a[0])
                del a
    else:
        from ascendify.compare.engine import compare_collections
        from ascendify.compare.io import open_collection

        metrics = None if mode in ("compare", "compare-2threads") else ["cosine", "rmse", "rel_euclid", "mean_rel"]
        jobs = 2 if mode == "compare-2threads" else 1
        rep = compare_collections(open_collection(os.path.join(root, "base")), open_collection(os.path.join(root, "cand")),
                                  metrics=metrics, jobs=jobs)
        assert rep.verdict == "PASS", rep.verdict
    dt = time.perf_counter() - t0
    kernel = "-"
    if mode != "numpy":  # did this compare load and use the numba kernels? (checked without importing numba)
        from ascendify.compare import metrics as M

        kernel = "numba" if M._fused_mod and M._fused_compiled else "numpy"
    ru = resource.getrusage(resource.RUSAGE_SELF)
    cpu = ru.ru_utime + ru.ru_stime - cpu0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    try:  # VmHWM: peak RSS of this process image (ru_maxrss can carry the parent's peak across exec)
        with open("/proc/self/status") as fh:
            rss_mb = next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration, ValueError):
        pass
    print(json.dumps({"mode": mode, "seconds": dt, "cpu_seconds": cpu, "rss_mb": rss_mb, "kernel": kernel}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=2.0, help="total size of both sides (GB)")
    ap.add_argument("--files", type=int, default=16, help="files per side")
    ap.add_argument("--dir", default=None, help="where to write the temporary data")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of all modes (medians are reported)")
    ap.add_argument("--before-src", default=None, help="also time the compare modes with ascendify imported from this "
                    "src folder (e.g. an older checkout's src), in the same rounds: before/after numbers in one run")
    ap.add_argument("--numpy-path", action="store_true", help="also time the compare modes with "
                    "ASCENDIFY_COMPARE_NUMBA=0 (numpy path, no numba kernels) in the same rounds")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    root = tempfile.mkdtemp(prefix="ascendify-bench-", dir=args.dir)
    try:
        free = shutil.disk_usage(root).free
        if free < args.gb * 1e9 * 1.2:
            sys.exit(f"not enough free disk in {root}: {free / 1e9:.1f} GB for {args.gb} GB of data")
        t = time.perf_counter()
        total = write_data(root, args.gb, args.files)
        print(f"wrote {total / 1e9:.2f} GB float32 ({args.files} .npy files per side) in {time.perf_counter() - t:.1f} s")
        env = dict(os.environ)
        src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
        env_before = dict(env)
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
        if args.before_src:
            env_before["PYTHONPATH"] = os.path.abspath(args.before_src) + os.pathsep + env_before.get("PYTHONPATH", "")
        modes: tuple[str, ...] = ("numpy", "compare", "compare-1pass", "compare-2threads")
        if args.numpy_path:
            modes += ("numpy-path:compare", "numpy-path:compare-1pass", "numpy-path:compare-2threads")
        if args.before_src:
            modes += ("before:compare", "before:compare-1pass", "before:compare-2threads")
        env_numpy = dict(env, ASCENDIFY_COMPARE_NUMBA="0")
        results: dict[str, list[dict]] = {m: [] for m in modes}

        def run(mode: str) -> dict:
            before, _, child_mode = mode.rpartition(":")
            penv = env_before if before == "before" else env_numpy if before == "numpy-path" else env
            out = subprocess.run([sys.executable, __file__, "--child", child_mode, root], capture_output=True, text=True, check=False,
                                 env=penv)
            if out.returncode:
                sys.exit(f"{mode} failed: {out.stderr.strip()[-500:]}")
            return json.loads(out.stdout.strip().splitlines()[-1])

        run("numpy")  # warm the page cache and the imports
        run("compare-1pass")  # and numba's on-disk kernel cache (compiled once, then loaded)
        for _ in range(max(1, args.repeat)):
            for mode in modes:
                results[mode].append(run(mode))
        print(f"{'mode':<29}{'kernel':>7}{'median s':>9}{'GB/s':>8}{'ratio':>8}{'CPU s':>8}{'CPU ratio':>10}"
              f"{'peak RSS MB':>13}   ratios per round")
        for mode in modes:
            rs = results[mode]
            med = statistics.median(r["seconds"] for r in rs)
            ratios = [b["seconds"] / r["seconds"] for b, r in zip(results["numpy"], rs)]
            cpu = statistics.median(r["cpu_seconds"] for r in rs)
            cpu_ratio = statistics.median(b["cpu_seconds"] / r["cpu_seconds"] for b, r in zip(results["numpy"], rs))
            print(f"{mode:<29}{rs[0].get('kernel', '-'):>7}{med:>9.2f}{total / med / 1e9:>8.2f}{statistics.median(ratios):>8.2f}{cpu:>8.2f}"
                  f"{cpu_ratio:>10.2f}{max(r['rss_mb'] for r in rs):>13.0f}   {' '.join(f'{x:.2f}' for x in ratios)}")
        print(f"(data {total / 1e9:.2f} GB; largest file {total / 2 / args.files / 1e6:.0f} MB; numpy read holds one "
              "file at a time, compare maps 4 MiB windows of a file at a time (with KL a file up to 256 MiB whole, for both "
              "passes) and works on 64k-element chunks, 1M with the numba kernels; "
              "target ratio >= 0.5, not asserted)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
