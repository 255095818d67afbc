#!/usr/bin/env python
"""Fix speed benchmark: ``ascendify fix`` against a cold ``ascendify scan`` of the same files.

Uses the corpus of ``bench/scan_bench.py`` (``bench/corpus/``, about 100k lines of generated
PyTorch code; built on first use).  In the same run it measures:

1. cold scan: ``discover`` + ``scan_files`` (default ``jobs``) with an empty cache folder;
2. fix, diff mode: what ``ascendify fix`` does — a cold scan, then ``fix_tree(..., "diff")``
   (apply every safe fix until nothing more applies, re-scanning each fixed file, the diff);
3. fix --output: the same with a migrated copy of the tree and the change log written;
4. (with ``--before-src DIR``) the same three rows for another copy of ascendify's ``src`` folder
   (an older commit: ``git worktree add /tmp/old <commit>``, then ``--before-src /tmp/old/src``), in
   a child process, alternating with this copy's rounds so both see the same machine load.

and prints seconds, lines/s and each fix's ratio to the cold scan against the target:

* fix <= 2 x cold scan  (diff mode and --output)

With ``--before-src`` it also checks that both copies wrote the same diff and applied the same
fixes.  It prints; it does not assert (timings on shared machines are noisy).

    python bench/fix_bench.py                 # build the corpus if needed, measure
    python bench/fix_bench.py --repeat 3      # best of 3 for each measurement
    python bench/fix_bench.py --repeat 3 --before-src /tmp/old/src   # before/after, same rounds
    python bench/fix_bench.py --profile       # cProfile of fix_tree with jobs=1, top 25 functions
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _src_dir(argv) -> str:
    """The ``src`` folder to measure: ``--src DIR`` (the child process of ``--before-src``), else ours."""
    if "--src" in argv:
        return os.path.abspath(argv[argv.index("--src") + 1])
    return os.path.join(os.path.dirname(HERE), "src")


sys.path.insert(0, _src_dir(sys.argv))
sys.path.insert(0, HERE)

from scan_bench import DEFAULT_DIR, ensure_corpus  # noqa: E402

from ascendify.config import Settings  # noqa: E402
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


def one_round(corpus: str, jobs, tmp: str, tag: str) -> dict:
    """One round of the three rows: seconds, and what the fixes did (to compare two copies)."""
    t_scan, res = time_scan(corpus, os.path.join(tmp, f"{tag}-cache-scan"), jobs)
    t_diff, run_diff, t_diff_fix = time_fix(corpus, os.path.join(tmp, f"{tag}-cache-diff"), jobs, "diff")
    out = os.path.join(tmp, f"{tag}-out")
    t_out, run_out, t_out_fix = time_fix(corpus, os.path.join(tmp, f"{tag}-cache-out"), jobs, "output", out)
    shutil.rmtree(out, ignore_errors=True)
    return {"scan": t_scan, "diff": t_diff, "diff_fix": t_diff_fix, "out": t_out, "out_fix": t_out_fix,
            "lines": sum(res.lines.values()), "stats": run_diff.stats(), "out_stats": run_out.stats(),
            "diff_sha": hashlib.sha256(run_diff.diff.encode("utf-8", "surrogateescape")).hexdigest()}


def before_round(src: str, args) -> dict:
    """:func:`one_round` of the ``src`` copy, in a child process."""
    cmd = [sys.executable, os.path.abspath(__file__), "--src", src, "--round-json", "--corpus", args.corpus, "--lines", str(args.lines)]
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def best(rounds: list) -> dict:
    return {k: min(r[k] for r in rounds) for k in ("scan", "diff", "diff_fix", "out", "out_fix")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=DEFAULT_DIR, help="corpus folder (default: bench/corpus)")
    ap.add_argument("--lines", type=int, default=100_000, help="minimum corpus size in lines")
    ap.add_argument("--repeat", type=int, default=1, help="best of N for each measurement")
    ap.add_argument("--jobs", type=int, default=None, help="processes (default: the engine's default, CPU count)")
    ap.add_argument("--before-src", metavar="DIR", help="also measure this copy of ascendify's src folder, alternating rounds")
    ap.add_argument("--src", help=argparse.SUPPRESS)
    ap.add_argument("--round-json", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--profile", action="store_true", help="cProfile fix_tree (diff mode, jobs=1) and print the top functions")
    args = ap.parse_args(argv)

    if args.round_json:  # the child of --before-src: one round, as JSON
        ensure_corpus(args.corpus, args.lines, False)
        tmp = tempfile.mkdtemp(prefix="ascendify-fix-bench-")
        try:
            print(json.dumps(one_round(args.corpus, args.jobs, tmp, "r")))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return 0

    t0 = time.perf_counter()
    files, lines = ensure_corpus(args.corpus, args.lines, False)
    print(f"corpus: {files} files, {lines:,} lines in {args.corpus} ({time.perf_counter() - t0:.1f}s to build/check)")
    print(f"cpus: {os.cpu_count()}, jobs: {args.jobs or 'default (' + str(os.cpu_count()) + ')'}, python {sys.version.split()[0]}")

    tmp = tempfile.mkdtemp(prefix="ascendify-fix-bench-")
    mine, theirs = [], []
    try:
        for r in range(args.repeat):
            mine.append(one_round(args.corpus, args.jobs, tmp, f"r{r}"))
            if args.before_src:
                theirs.append(before_round(args.before_src, args))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    scanned = mine[0]["lines"]
    print()
    for label, rounds in (("", mine), ("before: ", theirs)):
        if not rounds:
            continue
        b = best(rounds)
        for name, secs, fix_part in (("cold scan", b["scan"], None), ("fix (diff)", b["diff"], b["diff_fix"]), ("fix --output", b["out"], b["out_fix"])):
            extra = f"   (fix_tree {fix_part:6.3f} s)" if fix_part is not None else ""
            print(f"  {label + name:<36} {secs:8.3f} s  {scanned / secs:12,.0f} lines/s{extra}")
        for name, secs in (("fix (diff)   / cold scan", b["diff"]), ("fix --output / cold scan", b["out"])):
            ratio = secs / b["scan"]
            print(f"  {label}{name} = {ratio:5.2f}x   target <= {TARGET_FIX_VS_SCAN:.1f}x   {'MET' if ratio <= TARGET_FIX_VS_SCAN else 'MISSED'}")
        print()
    s = mine[0]["stats"]
    print(f"  fixes applied: {s['applied']:,} in {s['files_changed']} files; remaining {s['remaining']:,}; "
          f"--output applied the same: {mine[0]['out_stats'] == s}")
    if theirs:
        b, a = best(theirs), best(mine)
        print(f"  fix_tree before/after: diff {b['diff_fix'] / a['diff_fix']:.2f}x, --output {b['out_fix'] / a['out_fix']:.2f}x")
        print(f"  same diff and fixes as --before-src: {theirs[0]['diff_sha'] == mine[0]['diff_sha'] and theirs[0]['stats'] == s}")

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
