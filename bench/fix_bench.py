#!/usr/bin/env python
"""Fix speed benchmark: ``ascendify fix`` against a cold ``ascendify scan`` of the same files.

Uses the corpus of ``bench/scan_bench.py`` (``bench/corpus/``, about 100k lines of generated
PyTorch code; built on first use).  In the same run it measures:

1. cold scan: ``discover`` + ``scan_files`` (default ``jobs``) with an empty cache folder;
2. fix, diff mode: what ``ascendify fix`` does — a cold scan, then ``fix_tree(..., "diff")``
   (apply every safe fix until nothing more applies, re-scanning each fixed file, the diff);
3. fix --output: the same with a migrated copy of the tree and the change log written;
4. (unless ``--no-before``) fix, diff mode, with the engine before this one: every file through
   LibCST (``ascendify.fix.apply.ENGINE = "cst"``), one process.

and prints seconds, lines/s and each fix's ratio to the cold scan against the target:

* fix <= 2 x cold scan  (diff mode and --output)

It also checks that the text engine and the LibCST engine wrote the same diff.  It prints; it
does not assert (timings on shared machines are noisy).

    python bench/fix_bench.py                 # build the corpus if needed, measure
    python bench/fix_bench.py --repeat 3      # best of 3 for each measurement
    python bench/fix_bench.py --no-before     # skip the (slow) LibCST engine row
    python bench/fix_bench.py --profile       # cProfile of fix_tree with jobs=1, top 25 functions
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
sys.path.insert(0, HERE)

from scan_bench import DEFAULT_DIR, ensure_corpus  # noqa: E402

from ascendify.config import Settings  # noqa: E402
from ascendify.fix import apply as apply_mod  # noqa: E402
from ascendify.fix.run import fix_tree  # noqa: E402
from ascendify.scan.engine import discover, scan_files  # noqa: E402

TARGET_FIX_VS_SCAN = 2.0


def time_scan(corpus: str, cache: str, jobs):
    settings = Settings().validate()
    t0 = time.perf_counter()
    entries = discover([corpus], settings, lambda p, m: None)
    result = scan_files(entries, settings, cache, jobs)
    return time.perf_counter() - t0, result


def time_fix(corpus: str, cache: str, jobs, mode: str, out_dir=None, fix_jobs=None):
    """Seconds for what ``ascendify fix`` does: a cold scan, then ``fix_tree``."""
    t_scan, result = time_scan(corpus, cache, jobs)
    t1 = time.perf_counter()
    run = fix_tree((corpus,), result, Settings().validate(), mode, out_dir, jobs=fix_jobs if fix_jobs else jobs)
    t_fix = time.perf_counter() - t1
    return t_scan + t_fix, run, t_fix


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=DEFAULT_DIR, help="corpus folder (default: bench/corpus)")
    ap.add_argument("--lines", type=int, default=100_000, help="minimum corpus size in lines")
    ap.add_argument("--repeat", type=int, default=1, help="best of N for each measurement")
    ap.add_argument("--jobs", type=int, default=None, help="processes (default: the engine's default, CPU count)")
    ap.add_argument("--no-before", action="store_true", help="skip the LibCST engine (one process) row")
    ap.add_argument("--profile", action="store_true", help="cProfile fix_tree (diff mode, jobs=1) and print the top functions")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    files, lines = ensure_corpus(args.corpus, args.lines, False)
    print(f"corpus: {files} files, {lines:,} lines in {args.corpus} ({time.perf_counter() - t0:.1f}s to build/check)")
    print(f"cpus: {os.cpu_count()}, jobs: {args.jobs or 'default (' + str(os.cpu_count()) + ')'}, python {sys.version.split()[0]}")

    tmp = tempfile.mkdtemp(prefix="ascendify-fix-bench-")
    n = [0]

    def fresh(name: str) -> str:
        n[0] += 1
        return os.path.join(tmp, f"{name}{n[0]}")

    try:
        rows = []
        t_scan, res = min((time_scan(args.corpus, fresh("cache"), args.jobs) for _ in range(args.repeat)), key=lambda r: r[0])
        rows.append(("cold scan", t_scan, None))
        t_diff, run_diff, t_diff_fix = min((time_fix(args.corpus, fresh("cache"), args.jobs, "diff") for _ in range(args.repeat)), key=lambda r: r[0])
        rows.append(("fix (diff)", t_diff, t_diff_fix))
        outs = []
        for _ in range(args.repeat):
            out = fresh("out")
            outs.append(time_fix(args.corpus, fresh("cache"), args.jobs, "output", out))
            shutil.rmtree(out, ignore_errors=True)
        t_out, run_out, t_out_fix = min(outs, key=lambda r: r[0])
        rows.append(("fix --output", t_out, t_out_fix))
        before = None
        if not args.no_before:
            engine = apply_mod.ENGINE
            apply_mod.ENGINE = "cst"
            try:
                before = time_fix(args.corpus, fresh("cache"), args.jobs, "diff", fix_jobs=1)
            finally:
                apply_mod.ENGINE = engine
            rows.append(("fix (diff), before: LibCST, 1 proc", before[0], before[2]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    scanned = sum(res.lines.values())
    print()
    for label, secs, fix_part in rows:
        extra = f"   (fix_tree {fix_part:6.3f} s)" if fix_part is not None else ""
        print(f"  {label:<36} {secs:8.3f} s  {scanned / secs:12,.0f} lines/s{extra}")
    print()
    for label, secs in (("fix (diff)   / cold scan", t_diff), ("fix --output / cold scan", t_out)):
        r = secs / t_scan
        print(f"  {label} = {r:5.2f}x   target <= {TARGET_FIX_VS_SCAN:.1f}x   {'MET' if r <= TARGET_FIX_VS_SCAN else 'MISSED'}")
    if before is not None:
        print(f"  before (LibCST, 1 proc) / cold scan = {before[0] / t_scan:5.2f}x; speed-up of fix_tree {before[2] / t_diff_fix:.1f}x")
    print()
    s = run_diff.stats()
    print(f"  fixes applied: {s['applied']:,} in {s['files_changed']} files; remaining {s['remaining']:,}; "
          f"--output applied the same: {run_out.stats() == s}")
    if before is not None:
        print(f"  same diff as the LibCST engine: {before[1].diff == run_diff.diff}")

    if args.profile:
        settings = Settings().validate()
        entries = discover([args.corpus], settings, lambda p, m: None)
        result = scan_files(entries, settings, None, args.jobs)
        prof = cProfile.Profile()
        prof.enable()
        fix_tree((args.corpus,), result, settings, "diff", jobs=1)
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(25)
        print("\ncProfile, fix_tree, diff mode, jobs=1 (cumulative):")
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
