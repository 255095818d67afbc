"""Library-summary load time per library (printed, not asserted).

For each summarised library: the time to load its data warm (``ascendify.libsum.load``:
gzip + JSON of ``<package>.json.gz``, cache cleared, module imported) and to build the
``Summary`` of its newest release, against a baseline in the same run: ``json.load`` of the
same data already decompressed, from a file.  Target: under 20 ms per library (issue 20).

    .venv/bin/python bench/libsum_bench.py
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

REPEAT = 5


def main() -> int:
    from ascendify import libsum

    data_dir = os.path.join(ROOT, "src", "ascendify", "libsum", "data")
    worst = 0.0
    print(f"{'library':18} {'gz KiB':>7} {'load ms':>8} {'json.load ms':>13} {'ratio':>6}")
    for pkg in sorted(libsum.index()):
        path = os.path.join(data_dir, libsum.index()[pkg]["data"])
        with tempfile.NamedTemporaryFile("wb", suffix=".json", delete=False) as tmp:
            tmp.write(gzip.decompress(open(path, "rb").read()))
        best = base = float("inf")
        for _ in range(REPEAT):
            t = time.perf_counter()
            with open(tmp.name, encoding="utf-8") as fh:
                json.load(fh)
            base = min(base, (time.perf_counter() - t) * 1000)
            libsum.load.cache_clear()
            libsum.summary.cache_clear()
            t = time.perf_counter()
            versions = sorted(libsum.load(pkg)["versions"], key=libsum.vkey)
            libsum.summary(pkg, versions[-1], "")
            best = min(best, (time.perf_counter() - t) * 1000)
        os.unlink(tmp.name)
        worst = max(worst, best)
        print(f"{pkg:18} {os.path.getsize(path) / 1024:7.1f} {best:8.2f} {base:13.2f} {best / base if base else 0:6.1f}")
    print(f"slowest library: {worst:.2f} ms (target < 20 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
