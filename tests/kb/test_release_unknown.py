"""A --torch-npu the KB does not know: said plainly, with the known release used instead (the newest at
or below it; the oldest when it is older than all), warned once (issue 22's new-user trial: 9.9.9 used
2.9.0's data, 3.0.0 2.1.0's, by a distance that weighed minor numbers across majors).  Scan's wording
("... is not in the KB; using the nearest known release") is kept: tests/test_target.py checks it."""

from __future__ import annotations

import pytest

from ascendify.kb.ops import releases, resolve_release
from tests.cli_util import run_cli


@pytest.mark.parametrize("req", ["9.9.9", "3.0.0", "2.99"])
def test_newer_than_every_release_uses_the_newest(req):
    newest = releases()[-1]
    got, note = resolve_release(req)
    assert got == newest
    assert note == (f"torch_npu {req} is not in the KB; using the nearest known release torch_npu {newest} instead "
                    "(the newest the KB knows)")


@pytest.mark.parametrize("req, line", [("2.2.0", "2.1.0"), ("2.7.5", "2.7.1"), ("2.12.1", "2.12.0")])
def test_between_releases_uses_the_newest_at_or_below(req, line):
    got, note = resolve_release(req)
    assert got.startswith(line + ".post"), got
    assert note == (f"torch_npu {req} is not in the KB; using the nearest known release torch_npu {got} instead "
                    f"(the newest the KB knows at or below {req})")


def test_older_than_every_release_uses_the_oldest():
    got, note = resolve_release("1.0.0")
    assert got == releases()[0]
    assert note.endswith(f"torch_npu {got} instead (the oldest the KB knows; none is older)")


def test_known_releases_and_lines_are_not_warned_about():
    assert resolve_release("2.7.1")[1] is None and resolve_release(releases()[-1]) == (releases()[-1], None)
    assert "same torch 2.7.1 line" in resolve_release("2.7.1.post99")[1]  # a post release of a known line


def test_ops_warns_once_and_uses_the_newest(tmp_path):
    r = run_cli("ops", "aten::add", "--torch-npu", "9.9.9", cwd=str(tmp_path))
    flat = " ".join(r.out.split())
    assert r.code == 0 and flat.startswith(f"aten::add — torch_npu {releases()[-1]} ")
    assert flat.count("9.9.9 is not in the KB") == 1 and "(the newest the KB knows)" in flat
    assert "9.9.9" not in r.err


def test_run_notes_the_unknown_release_in_the_kb_words(tmp_path):
    pytest.importorskip("torch")
    r = run_cli("run", "--torch-npu", "9.9.9", "--", "python", "-c", "print(1)", cwd=str(tmp_path))
    notes = [ln.strip() for ln in r.err.splitlines() + r.out.splitlines() if "9.9.9" in ln]
    assert notes == [f"note: torch_npu 9.9.9 is not in the KB; using the nearest known release torch_npu {releases()[-1]} "
                     "instead (the newest the KB knows)"], r.err + r.out
