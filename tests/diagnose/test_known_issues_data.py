"""Every packaged known-issue record (src/ascendify/diagnose/data/known_issues/*.jsonl) is well formed: required
fields, an http(s) URL, a non-empty verbatim quote, a known framework / resolution, no duplicate id or URL; and
the derived index is current (rebuild: python tools/diagnose_known_issues.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ascendify.diagnose import known_issues as ki

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.packaged_known_issues


def _files():
    return ki.data_files()


def test_every_record_is_valid():
    files = _files()
    recs, problems = ki.read_records(files)
    assert problems == []
    assert all(r["quote"] and all(q.strip() for q in r["quote"]) for r in recs)
    assert all(r["url"].startswith(("https://", "http://")) for r in recs)


def test_no_duplicate_ids_or_urls():
    ids, urls = [], []
    for _name, data in _files():
        for line in data.decode("utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                ids.append(rec.get("id"))
                urls.append((rec.get("url") or "").rstrip("/"))
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    assert len(urls) == len(set(urls)), sorted({u for u in urls if urls.count(u) > 1})[:10]


def test_packaged_index_is_current_and_loads():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "diagnose_known_issues.py"), "--check"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    idx = ki.load.__wrapped__() if hasattr(ki.load, "__wrapped__") else ki.load()
    assert len(idx.records) == sum(1 for _n, d in _files() for line in d.decode().splitlines() if line.strip())


def test_the_freshness_check_reads_the_catalogue_as_the_catalogue_module_does():
    # known_issues hashes the catalogue files itself (no import of the catalogue module at index load): the texts
    # must stay those signatures.data_files reads, or a changed catalogue would leave a stale index looking current
    from ascendify.diagnose import known_issues as ki
    from ascendify.diagnose.signatures import data_files

    assert ki._catalogue_texts() == data_files()
