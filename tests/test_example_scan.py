"""``ascendify scan examples/cuda_project`` reports exactly the planted CUDA-isms.

``tests/data/example_expected.csv`` lists every CUDA-ism planted in the
bundled example, one row per (file, line, code):

* ``file``  path inside ``examples/cuda_project`` (``/`` separators);
* ``line``  1-based line; in notebooks ``CELL:LINE`` (code-cell number, line in that cell);
* ``code``  the rule code that must report it, or a bare category prefix
            (``DST``, ``OPS``, ...) for a planted issue that no rule reports
            yet ("pending"): any finding of that category on that line then
            satisfies it;
* ``what``  what is planted there (reviewed by hand against the code).

The scan must report every row with a rule code, and nothing that is not a
row.  Pending rows are checked by a strict xfail test: when a rule starts
reporting all of them it fails (XPASS), asking for the exact codes to be
written into the CSV.  On failure the tests print
both sides of the difference with the source line, so a rule change that adds
or loses findings is easy to review.  If the example changes, update the CSV
(``python tests/test_example_scan.py`` prints the current findings as CSV
rows to start from) and review every line.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections import Counter

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE_REL = "examples/cuda_project"
EXAMPLE = os.path.join(ROOT, "examples", "cuda_project")
EXPECTED_CSV = os.path.join(ROOT, "tests", "data", "example_expected.csv")
FIELDS = ["file", "line", "code", "what"]


def run_scan(extra_env: dict | None = None) -> list[dict]:
    """``ascendify scan examples/cuda_project --format json`` from the repository root; its findings."""
    env = dict(os.environ, NO_COLOR="1", **(extra_env or {}))
    proc = subprocess.run([sys.executable, "-m", "ascendify", "scan", EXAMPLE_REL, "--format", "json", "--fail-on", "never"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"ascendify scan failed (exit {proc.returncode}):\n{proc.stderr}"
    return json.loads(proc.stdout)["findings"]


def finding_key(f: dict) -> tuple[str, str, str]:
    path = f["path"].replace(os.sep, "/")
    prefix = EXAMPLE_REL + "/"
    assert path.startswith(prefix), f"finding outside the example: {path}"
    line = f"{f['cell']}:{f['cell_line']}" if f.get("cell") is not None else str(f["line"])
    return path[len(prefix):], line, f["code"]


def load_expected() -> list[dict]:
    with open(EXPECTED_CSV, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and list(rows[0]) == FIELDS, f"{EXPECTED_CSV}: columns must be {FIELDS}"
    return rows


_NB_CACHE: dict = {}


def source_line(file: str, line: str) -> str:
    """The text at (file, line) of the example, for messages; '' if there is no such line."""
    path = os.path.join(EXAMPLE, file)
    try:
        if ":" in line:
            if path not in _NB_CACHE:
                with open(path, encoding="utf-8") as fh:
                    nb = json.load(fh)
                _NB_CACHE[path] = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                                   for c in nb["cells"] if c["cell_type"] == "code"]
            cell, ln = (int(x) for x in line.split(":"))
            return _NB_CACHE[path][cell - 1].split("\n")[ln - 1]
        with open(path, encoding="utf-8") as fh:
            return fh.read().split("\n")[int(line) - 1]
    except (OSError, IndexError, ValueError):
        return ""


def match(findings: list[tuple], expected: list[dict]) -> tuple[list[dict], list[dict], list[tuple]]:
    """(rows with a code not reported, pending rows not reported, findings matching no row).

    Rows with a rule code are matched first (with multiplicity), then pending
    rows (a bare category prefix) take any remaining finding of their
    category on their line.
    """
    left = Counter(findings)
    missing = []
    pending = []
    for row in expected:
        key = (row["file"], row["line"], row["code"])
        if len(row["code"]) == 3:
            pending.append(row)
        elif left[key] > 0:
            left[key] -= 1
        else:
            missing.append(row)
    missing_pending = []
    for row in pending:
        hit = next((k for k in sorted(left) if left[k] > 0 and k[:2] == (row["file"], row["line"]) and k[2].startswith(row["code"])), None)
        if hit is None:
            missing_pending.append(row)
        else:
            left[hit] -= 1
    unexpected = sorted(k for k, n in left.items() for _ in range(n))
    return missing, missing_pending, unexpected


def _sort_key(file: str, line: str) -> tuple:
    return (file, tuple(int(x) for x in line.split(":")))


def diff_report(missing: list[dict], unexpected: list[tuple], title: str = "planted but NOT reported") -> str:
    out = []
    if missing:
        out.append(f"{title} ({len(missing)}):")
        for r in sorted(missing, key=lambda r: _sort_key(r["file"], r["line"])):
            out.append(f"  - {r['file']}:{r['line']}: {r['code']}  ({r['what']})")
            out.append(f"        | {source_line(r['file'], r['line']).strip()}")
    if unexpected:
        out.append(f"reported but NOT planted ({len(unexpected)}):")
        for file, line, code in sorted(unexpected, key=lambda k: _sort_key(k[0], k[1])):
            out.append(f"  + {file}:{line}: {code}")
            out.append(f"        | {source_line(file, line).strip()}")
    return "\n".join(out)


@pytest.fixture(scope="module")
def findings(tmp_path_factory) -> list[tuple]:
    cache = str(tmp_path_factory.mktemp("scan_cache"))
    return sorted((finding_key(f) for f in run_scan({"XDG_CACHE_HOME": cache})), key=lambda k: (_sort_key(k[0], k[1]), k[2]))


def test_expected_csv_points_at_real_code():
    """Every row names an existing file and a non-blank line, with a description (catches stale line numbers)."""
    rows = load_expected()
    assert len(rows) >= 30
    for r in rows:
        assert os.path.isfile(os.path.join(EXAMPLE, r["file"])), r
        assert source_line(r["file"], r["line"]).strip(), f"{r['file']}:{r['line']} is blank or missing"
        assert r["what"].strip(), r
        assert len(r["code"]) in (3, 6) and r["code"][:3].isalpha() and r["code"][:3].isupper(), r
    assert len({(r["file"], r["line"], r["code"], r["what"]) for r in rows}) == len(rows), "duplicate rows"


def test_scan_reports_exactly_the_planted_set(findings):
    missing, _pending, unexpected = match(findings, load_expected())
    report = diff_report(missing, unexpected)
    print(report or "scan output matches tests/data/example_expected.csv")
    assert not missing and not unexpected, "\n" + report


def _pending_rows() -> list[dict]:
    return [r for r in load_expected() if len(r["code"]) == 3] if os.path.exists(EXPECTED_CSV) else []


@pytest.mark.xfail(bool(_pending_rows()), strict=True,
                   reason="planted CUDA-isms that no rule reports yet (rows with a bare category in example_expected.csv)")
def test_pending_planted_issues_are_reported(findings):
    """When this XPASSes, a rule now reports every pending row: put its exact code into the CSV."""
    _missing, missing_pending, _unexpected = match(findings, load_expected())
    report = diff_report(missing_pending, [], "planted, no rule reports it yet")
    print(report)
    assert not missing_pending, "\n" + report


def test_scan_covers_every_file_with_planted_issues(findings):
    files = {f for f, _l, _c in findings}
    for rel in ("trainer/engine.py", "trainer/utils.py", "trainer/distributed.py", "trainer/config.py",
                "trainer/checkpoint.py", "trainer/export.py", "trainer/metrics.py", "notebooks/explore.ipynb"):
        assert rel in files, f"no finding at all in {rel}"
    for rel in ("trainer/models/resnet.py", "trainer/data.py"):  # nothing device-specific there
        assert rel not in files, f"{rel} has findings: {[k for k in findings if k[0] == rel]}"
    # train.py has no CUDA code of its own: only the call of engine.main(), which does (DEV026)
    assert {c for f, _l, c in findings if f == "train.py"} == {"DEV026"}


def test_match_logic():
    """The comparison itself: exact codes, category placeholders, multiplicity, both directions."""
    rows = [{"file": "a.py", "line": "3", "code": "DEV001", "what": "x"},
            {"file": "a.py", "line": "3", "code": "DEV001", "what": "second on the line"},
            {"file": "a.py", "line": "5", "code": "DST", "what": "no rule yet"},
            {"file": "nb.ipynb", "line": "2:1", "code": "AMP002", "what": "y"}]
    found = [("a.py", "3", "DEV001"), ("a.py", "5", "DST004"), ("a.py", "9", "MEM001"), ("a.py", "3", "DEV001")]
    missing, pending, unexpected = match(found, rows)
    assert [r["code"] for r in missing] == ["AMP002"] and pending == []
    assert unexpected == [("a.py", "9", "MEM001")]
    missing, pending, unexpected = match(found[:1], rows[:3])
    assert [r["what"] for r in missing] == ["second on the line"]
    assert [r["code"] for r in pending] == ["DST"] and unexpected == []


if __name__ == "__main__":  # print the current findings as CSV rows (a starting point; review every line)
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(FIELDS)
    for f in run_scan():
        file, line, code = finding_key(f)
        w.writerow([file, line, code, f"{f['message']} | {source_line(file, line).strip()}"])
