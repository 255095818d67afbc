"""KB load time per torch_npu release, and lookup costs (printed, not asserted).

Each release table is loaded cold in a fresh child process (import + gzip + JSON)
and warm (cache cleared, module already imported).  Target: < 100 ms per release
(issue #3).  The baseline in the same run is a plain ``json.load`` of the
uncompressed index file, to show the machine's speed.

    .venv/bin/python bench/kb_bench.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

CHILD = r"""
import time, sys
t0 = time.perf_counter()
from ascendify.kb import ops
t1 = time.perf_counter()
ops.load_release(sys.argv[1])
t2 = time.perf_counter()
print((t1 - t0) * 1000, (t2 - t1) * 1000)
"""


def main() -> int:
    from ascendify.kb import DATA_DIR
    from ascendify.kb import ops
    t = time.perf_counter()
    with open(os.path.join(DATA_DIR, "index.json"), encoding="utf-8") as fh:
        json.load(fh)
    base = (time.perf_counter() - t) * 1000
    print(f"baseline: json.load(index.json) {base:.2f} ms")
    print(f"{'release':14} {'cold import':>11} {'cold load':>10} {'warm load':>10} {'vs 100 ms':>10}")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    worst = 0.0
    for rel in ops.releases():
        out = subprocess.run([sys.executable, "-c", CHILD, rel], capture_output=True, text=True, env=env).stdout.split()
        imp, cold = float(out[0]), float(out[1])
        ops._RELEASES.clear()
        t = time.perf_counter()
        ops.load_release(rel)
        warm = (time.perf_counter() - t) * 1000
        worst = max(worst, cold)
        print(f"{rel:14} {imp:9.1f}ms {cold:8.1f}ms {warm:8.1f}ms {cold / 100:9.2f}x")
    from ascendify.kb.apimap import api_fallbacks
    from ascendify.kb.query import lookup
    t = time.perf_counter()
    api_fallbacks("2.7.1.post11")
    print(f"API fallback map for one release (used by the OPS rules): {(time.perf_counter() - t) * 1000:.1f} ms")
    t = time.perf_counter()
    lookup("aten::linalg_inv_ex", all_versions=True)
    print(f"ops lookup, all 13 releases (tables cached): {(time.perf_counter() - t) * 1000:.1f} ms")
    print(f"worst cold load {worst:.1f} ms = {worst / 100:.2f}x the 100 ms target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
