#!/usr/bin/env python3
"""How well ``ascendify diagnose`` finds a known issue in a log worded a little differently from its thread.

    python tools/diagnose_selfretrieval.py [--seed 7] [--sample 300] [--no-prefix]

For each sampled known-issue record, a log is written from its quoted lines the way another user's log of the
same failure differs: numbers changed, site-packages paths moved, a log prefix added (Python logging, vLLM,
a Ray worker tag, a torchrun rank; ``--no-prefix`` keeps the bare lines), and an unrelated INFO line before them.
The whole pipeline diagnoses it (not the index alone); the record counts as found when it is the first finding's
known issue.  Prints the top-1 rate and why the others missed (no finding at all; a finding without a known
issue, usually a catalogue entry that explains the same message; another record; the record on a later finding).

Deterministic for a seed.  A measurement, not a gate (exit 0); 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from ascendify.diagnose import known_issues as ki  # noqa: E402
from ascendify.diagnose.engine import diagnose  # noqa: E402

PREFIXES = ["", "[rank3]: ", "ERROR 05-02 11:03:12 [core.py:586] ", "(VllmWorker rank=1 pid=881) ",
            "2026-03-01 10:00:01,123 - ERROR - "]
NOISE = "INFO 05-02 11:00:00 [model_runner.py:100] Loading model weights took 12.3 GiB"


def perturb(line: str, rng: random.Random) -> str:
    line = re.sub(r"\d+", lambda m: str(int(m.group(0)) + rng.randint(1, 9)) if len(m.group(0)) < 6 else m.group(0), line)
    return re.sub(r"/[\w./-]+/(?:site-packages|dist-packages)/", "/usr/local/python3.11.10/lib/python3.11/site-packages/", line)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sample", type=int, default=300, help="records to try (0: all)")
    ap.add_argument("--no-prefix", action="store_true", help="keep the quoted lines without a log prefix")
    a = ap.parse_args(argv)
    if a.sample < 0:
        ap.error("--sample must be 0 or more")
    os.environ.pop(ki.EXCLUDE_ENV, None)
    rng = random.Random(a.seed)
    recs = ki.load().records
    sample = recs if a.sample == 0 or a.sample >= len(recs) else rng.sample(recs, a.sample)
    prefixes = [""] if a.no_prefix else PREFIXES
    by_id = {r["id"]: r for r in recs}
    stats: collections.Counter = collections.Counter()
    with tempfile.TemporaryDirectory() as td:
        for i, r in enumerate(sample):
            pre = rng.choice(prefixes)
            lines = [NOISE] + [pre + perturb(x, rng) for x in r["quote"] if x.strip()]
            p = os.path.join(td, f"{i:04d}.log")
            with open(p, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines) + "\n")
            rep = diagnose((p,))
            f = rep.findings[0] if rep.findings else None
            got = f.known_issue["id"] if f is not None and f.known_issue else None
            if got == r["id"]:
                stats["found"] += 1
            elif f is None:
                stats["no finding"] += 1
            elif got is None:
                later = any(g.known_issue and g.known_issue["id"] == r["id"] for g in rep.findings[1:])
                stats["on a later finding" if later else "finding without a known issue"] += 1
            elif by_id.get(got, {}).get("fix") == r.get("fix"):
                stats["another record, same fix"] += 1
            else:
                stats["another record"] += 1
    n = len(sample)
    print(f"{n} records (seed {a.seed}{', no prefix' if a.no_prefix else ''}): found first {stats['found']}/{n} "
          f"({stats['found'] / n:.0%})")
    for k, v in stats.most_common():
        if k != "found":
            print(f"  {k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
