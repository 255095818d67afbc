"""`doctor --chip`: a chip the KB does not know is a usage error (exit 2) that names the known ones,
as fit and export treat an unknown --chip (issue 22's new-user trial: it was a note and exit 0)."""

from __future__ import annotations

import json

import pytest

from tests.cli_util import run_cli


@pytest.mark.parametrize("chip", ["bogus", "Ascend999", "911b", " "])
def test_unknown_chip_is_a_usage_error_naming_the_known_ones(tmp_path, chip):
    r = run_cli("doctor", "--root", str(tmp_path), "--chip", chip)
    assert r.code == 2 and r.out == "", (r.code, r.out)
    assert r.err == (f"ascendify: error: doctor --chip {chip!r}: not a chip the KB knows; give a family: "
                     "910 (910a, 910pro), 910b (a2), 910c (a3, 910_93), 950, 310p, 310b, 310; "
                     "or a soc_version such as Ascend910B3, Ascend310P3 (all 35 are in docs/chips.md)\n")


def test_unknown_chip_is_an_error_in_json_too(tmp_path):
    r = run_cli("doctor", "--root", str(tmp_path), "--chip", "bogus", "--format", "json")
    assert r.code == 2 and r.out == "" and r.err.startswith("ascendify: error: doctor --chip 'bogus'")


@pytest.mark.parametrize("chip", ["a3", "910b", "310P", "Ascend910B3", "910B3", "ascend310p3", "Ascend950PR_xxxx"])
def test_known_chips_and_families_still_run(tmp_path, chip):
    r = run_cli("doctor", "--root", str(tmp_path), "--chip", chip, "--format", "json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert not any("is not a soc_version or family" in n for n in doc.get("notes", [])), doc.get("notes")
