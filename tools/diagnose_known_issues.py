#!/usr/bin/env python3
"""Validate the known-issue data of ``ascendify diagnose`` and rebuild its derived index.

    python tools/diagnose_known_issues.py           # validate, write data/known_issues/_index.json
    python tools/diagnose_known_issues.py --check   # exit 1 if the data has problems or the index is stale
    python tools/diagnose_known_issues.py --query "EZ9999 ... must be configured in ascending order"

The data are ``src/ascendify/diagnose/data/known_issues/<project>.jsonl`` (one record a line,
shape in :mod:`ascendify.diagnose.known_issues`); the index (records, BM25 postings, IDF,
document lengths, the SHA-256 of each data file) is derived from them and loaded lazily by
``diagnose``; when it is stale the loader builds the same index in memory (slower).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from ascendify.diagnose import known_issues as ki  # noqa: E402
from ascendify.fsutil import atomic_write  # noqa: E402

DATA = os.path.join(ROOT, "src", "ascendify", "diagnose", "data", ki.DATA_DIR)


def _files() -> list:
    out = []
    for name in sorted(os.listdir(DATA)) if os.path.isdir(DATA) else []:
        if name.endswith(".jsonl"):
            with open(os.path.join(DATA, name), "rb") as fh:
                out.append((name, fh.read()))
    return out


def render(idx: dict) -> bytes:
    return (json.dumps(idx, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 on data problems or a stale index; write nothing")
    ap.add_argument("--query", help="print the records this text matches best (with scores) and exit")
    a = ap.parse_args(argv)
    files = _files()
    recs, problems = ki.read_records(files)
    for p in problems:
        print(f"problem: {p}", file=sys.stderr)
    idx = ki.build(recs, ki.sources_hash(files))
    if a.query:
        index = ki.Index(idx)
        for m in index.search([a.query], top=5):
            print(f"{m.confidence:.2f} {m.score:6.2f} {m.record['id']}  {m.record['title'][:80]}  terms={m.terms[:6]}")
        best = index.best([a.query])
        print("match:", best.record["id"] if best else None)
        return 0
    path = os.path.join(DATA, ki.INDEX_NAME)
    data = render(idx)
    if a.check:
        try:
            with open(path, "rb") as fh:
                cur = fh.read()
        except OSError:
            cur = b""
        stale = cur != data
        if stale:
            print(f"{path} is stale: run python tools/diagnose_known_issues.py", file=sys.stderr)
        return 1 if (problems or stale) else 0
    atomic_write(path, data)
    print(f"{len(recs)} records from {len(files)} file(s), {len(idx['idf'])} terms -> {os.path.relpath(path, ROOT)}"
          + (f"; {len(problems)} problem(s) (records left out)" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
