"""Do several projects under one scan root resolve independently?

Scans ROOT once, then each example folder alone, and compares the cross-file findings (the project
pass's: DEV026, and DST001/DEV006/... whose related locations are in another file) of each example:
one scan of the whole folder should find, for every example, what scanning that example alone finds
(issue 20, "Done when").  Nothing asserts; read the output.

    .venv/bin/python bench/monorepo_bench.py /path/to/pytorch/examples [--split distributed,distributed/rpc,cpp]

An example is a folder directly under ROOT that holds Python files; the folders named in --split are
divided into their own subfolders instead (pytorch/examples keeps one example per folder of
``distributed/``).  The scans run ``ascendify scan --format json --no-cache -j 1``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys


def cross_file(findings: list, base: str) -> set:
    """(path relative to ``base``, line, col, code) of each cross-file finding under ``base``."""
    out = set()
    for f in findings:
        path = os.path.realpath(f["path"])
        if not (path == base or path.startswith(base + os.sep)):
            continue
        rel = [r for r in (f.get("related") or ()) if os.path.realpath(os.path.join(os.path.dirname(f["path"]), r["path"])) != path
               and os.path.realpath(r["path"]) != path]
        if f["code"] == "DEV026" or (rel and f["code"] != "EXT017"):
            out.add((os.path.relpath(path, base), f["line"], f["col"], f["code"]))
    return out


def scan(path: str) -> list:
    cmd = [sys.executable, "-m", "ascendify", "scan", path, "--format", "json", "--no-cache", "-j", "1", "--fail-on", "never"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"scan of {path} failed ({p.returncode}): {p.stderr.strip()[-300:]}")
    return json.loads(p.stdout)["findings"]


def examples(root: str, split: set) -> list:
    out = []

    def has_py(d: str) -> bool:
        return any(fn.endswith(".py") for _dp, _dn, fns in os.walk(d) for fn in fns)

    def visit(d: str, rel: str) -> None:
        for name in sorted(os.listdir(d)):
            full = os.path.join(d, name)
            r = f"{rel}/{name}" if rel else name
            if not os.path.isdir(full) or name.startswith(".") or not has_py(full):
                continue
            if r in split:
                visit(full, r)
            else:
                out.append(r)

    visit(root, "")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root")
    ap.add_argument("--split", default="distributed,distributed/rpc,cpp")
    a = ap.parse_args()
    root = os.path.realpath(a.root)
    exs = examples(root, {s for s in a.split.split(",") if s})
    whole = scan(root)
    same = total_alone = total_whole = 0
    print(f"{'example':40} {'alone':>5} {'whole':>5} {'both':>5}")
    for ex in exs:
        base = os.path.join(root, ex)
        alone = cross_file(scan(base), base)
        in_whole = cross_file(whole, base)
        both = alone & in_whole
        total_alone += len(alone)
        total_whole += len(in_whole)
        same += alone == in_whole
        if alone or in_whole:
            print(f"{ex:40} {len(alone):5} {len(in_whole):5} {len(both):5}")
            for x in sorted(alone - in_whole):
                print(f"    only alone: {x}")
            for x in sorted(in_whole - alone):
                print(f"    only whole: {x}")
    print(f"examples: {len(exs)}; identical: {same}/{len(exs)}; cross-file findings alone: {total_alone}, in the whole scan: {total_whole}")


if __name__ == "__main__":
    main()
