"""Throughput of `ascendify compare` on float32 outputs vs a plain numpy read of the same files.

Writes a baseline and a candidate folder of .npy files (default 2 GB in total,
both sides together) into a temporary folder, warms the page cache, then
measures in this one run:

* numpy read: ``np.load`` of every file (full read into memory, one file at a time);
* compare: ``compare_collections`` with every metric (two passes, KL needs min/max),
  with ``--metric`` monitors that need one pass (no KL), and with 2 worker threads.

Each measurement runs in a fresh child process that also reports its peak RSS,
to show memory stays bounded (streamed in chunks, never the whole data set).
Prints GB/s and the ratio to the numpy read (target: >= 0.5); asserts nothing.

    .venv/bin/python bench/compare_bench.py [--gb 2.0] [--files 16] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
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
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    try:  # VmHWM: peak RSS of this process image (ru_maxrss can carry the parent's peak across exec)
        with open("/proc/self/status") as fh:
            rss_mb = next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration, ValueError):
        pass
    print(json.dumps({"mode": mode, "seconds": dt, "rss_mb": rss_mb}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=2.0, help="total size of both sides (GB)")
    ap.add_argument("--files", type=int, default=16, help="files per side")
    ap.add_argument("--dir", default=None, help="where to write the temporary data")
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
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
        results = {}
        for mode in ("numpy", "numpy", "compare", "compare-1pass", "compare-2threads", "numpy"):
            out = subprocess.run([sys.executable, __file__, "--child", mode, root], capture_output=True, text=True, env=env)
            if out.returncode:
                sys.exit(f"{mode} failed: {out.stderr.strip()[-500:]}")
            r = json.loads(out.stdout.strip().splitlines()[-1])
            results.setdefault(mode, []).append(r)
        base = min(r["seconds"] for r in results["numpy"])
        gbs_np = total / base / 1e9
        print(f"{'mode':<18}{'seconds':>9}{'GB/s':>8}{'ratio':>8}{'peak RSS MB':>13}")
        for mode, rs in results.items():
            best = min(rs, key=lambda r: r["seconds"])
            gbs = total / best["seconds"] / 1e9
            print(f"{mode:<18}{best['seconds']:>9.2f}{gbs:>8.2f}{gbs / gbs_np:>8.2f}{best['rss_mb']:>13.0f}")
        print(f"(data {total / 1e9:.2f} GB; largest file {total / 2 / args.files / 1e6:.0f} MB; numpy read holds one "
              "file at a time, compare streams 64k-element chunks; target ratio >= 0.5, not asserted)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
