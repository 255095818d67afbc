"""The vendored reference data (tests/data/reference) is what its README says: every file listed
with a sha256 is present and unchanged, and nothing unlisted hides there."""

from __future__ import annotations

import hashlib
import os
import re

from tests.conftest import REFERENCE

README = os.path.join(REFERENCE, "README.md")


def _listed() -> dict:
    text = open(README, encoding="utf-8").read()
    rows = {}
    section = None
    for line in text.splitlines():
        m = re.match(r"## (data/\S+)/", line)
        if m:
            section = m.group(1)
        m = re.match(r"\| `([^`]+)` \|.*\| `([0-9a-f]{64})` \|$", line)
        if m and section:
            rows[os.path.join(section, m.group(1))] = m.group(2)
    return rows


def test_every_listed_file_matches_its_sha256():
    rows = _listed()
    assert len(rows) == 12
    for rel, sha in rows.items():
        with open(os.path.join(REFERENCE, rel), "rb") as fh:
            assert hashlib.sha256(fh.read()).hexdigest() == sha, rel


def test_no_unlisted_data_file():
    rows = set(_listed())
    found = set()
    for d, _dirs, files in os.walk(os.path.join(REFERENCE, "data")):
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), REFERENCE)
            if f != "SOURCE.txt":
                found.add(rel)
    assert found == rows
    # one folder per researched wheel, each saying where it came from
    wheels = os.path.join(REFERENCE, "data", "torch_npu_wheels")
    assert len(os.listdir(wheels)) == 13
    assert all(os.path.isfile(os.path.join(wheels, v, "SOURCE.txt")) for v in os.listdir(wheels))
