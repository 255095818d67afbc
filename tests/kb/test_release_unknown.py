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


# --------------------------------------------------------------------------- a series, and the release used downstream
@pytest.mark.parametrize("req, line", [("2.7", "2.7.1"), ("2.1", "2.1.0"), ("2.14", "2.14.0"), ("2.10", "2.10.0")])
def test_a_series_selects_its_newest_release(req, line):
    """'2.7' means the 2.7 series: 2.7.1.postN, without a note (before: 2.6.0.post5, 'at or below 2.7')."""
    got, note = resolve_release(req)
    assert got == [r for r in releases() if r.startswith(line)][-1] and note is None, (got, note)


def test_a_series_the_kb_lacks_falls_back_to_at_or_below():
    got, note = resolve_release("2.2")
    assert got.startswith("2.1.0.post") and note.endswith("(the newest the KB knows at or below 2.2)"), (got, note)


CMP_SRC = "import torch\nm = torch.compile(torch.nn.Linear(2, 2))\nx = torch.zeros(2).cuda()\n"


def _scan(tmp_path, *args):
    import json

    p = tmp_path / "a.py"
    p.write_text(CMP_SRC)
    text = run_cli("scan", str(p), "--no-cache", "--no-config", "--fail-on", "never", *args)
    doc = json.loads(run_cli("scan", str(p), "--no-cache", "--no-config", "--fail-on", "never", "--format", "json", *args).out)
    return text, doc


def test_scan_judges_against_the_release_used_not_the_unknown_one(tmp_path):
    """Summary, findings and JSON name the release whose data is used (before: 'Judged against torch_npu 9.9.9
    (from --torch-npu).', CMP001 'on torch_npu 9.9.9', settings.torch_npu '9.9.9')."""
    newest = releases()[-1]
    r, doc = _scan(tmp_path, "--torch-npu", "9.9.9")
    assert r.out.splitlines()[-1] == f"Judged against torch_npu {newest} (nearest known to --torch-npu 9.9.9)."
    cmp = [ln for ln in r.out.splitlines() if " CMP001 " in ln]
    assert len(cmp) == 1 and f"on torch_npu {newest} needs Triton-Ascend" in cmp[0], r.out
    assert "9.9.9" not in cmp[0]
    assert r.err.count("torch_npu 9.9.9 is not in the KB") == 1  # warned once, as before
    s = doc["settings"]
    assert (s["torch_npu"], s["torch_npu_requested"], s["torch_npu_reason"]) == (newest, "9.9.9", "nearest known to --torch-npu 9.9.9")


def test_scan_series_is_judged_against_its_newest_release(tmp_path):
    used = [r for r in releases() if r.startswith("2.7.")][-1]
    r, doc = _scan(tmp_path, "--torch-npu", "2.7")
    assert r.out.splitlines()[-1] == f"Judged against torch_npu {used} (the newest known release of the 2.7 series, from --torch-npu 2.7)."
    assert "not in the KB" not in r.err
    assert (doc["settings"]["torch_npu"], doc["settings"]["torch_npu_requested"]) == (used, "2.7")


def test_scan_known_release_is_judged_as_given(tmp_path):
    """The negative: a known line keeps the user's words, nothing requested aside."""
    r, doc = _scan(tmp_path, "--torch-npu", "2.7.1")
    assert r.out.splitlines()[-1] == "Judged against torch_npu 2.7.1 (from --torch-npu)."
    assert (doc["settings"]["torch_npu"], doc["settings"]["torch_npu_requested"]) == ("2.7.1", None)


def test_config_release_unknown_names_the_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ascendify]\ntorch-npu = "9.9.9"\n')
    (tmp_path / "a.py").write_text(CMP_SRC)
    r = run_cli("scan", str(tmp_path), "--no-cache", "--fail-on", "never")
    assert r.out.splitlines()[-1] == (f"Judged against torch_npu {releases()[-1]} (nearest known to "
                                      'pyproject.toml: [tool.ascendify] torch-npu = "9.9.9").'), r.out


def test_fix_and_ops_use_the_same_release(tmp_path):
    import json

    p = tmp_path / "a.py"
    p.write_text(CMP_SRC)
    used = [r for r in releases() if r.startswith("2.7.")][-1]
    doc = json.loads(run_cli("fix", str(p), "--no-cache", "--no-config", "--torch-npu", "2.7", "--format", "json").out)
    assert (doc["settings"]["torch_npu"], doc["settings"]["torch_npu_requested"]) == (used, "2.7")
    out = run_cli("ops", "aten::add", "--torch-npu", "2.7", cwd=str(tmp_path)).out
    assert " ".join(out.split()).startswith(f"aten::add — torch_npu {used} "), out


def test_run_emulates_the_series_newest_release(tmp_path):
    pytest.importorskip("torch")
    used = [r for r in releases() if r.startswith("2.7.")][-1]
    r = run_cli("run", "--torch-npu", "2.7", "--", "python", "-c", "print(1)", cwd=str(tmp_path))
    assert f"emulated Ascend host: torch_npu {used}," in r.err + r.out, r.err + r.out
