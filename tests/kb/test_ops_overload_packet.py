"""`ascendify ops aten::add`: an overload packet without an overload of its own (no add.default) lists
its overloads, not an "unknown" row for the bare name; the default release is named, with why and how
to see the others (issue 22's new-user trial: "class unknown" for aten::add, one release without a word)."""

from __future__ import annotations

import json

from ascendify.kb import ops as kbops
from tests.cli_util import run_cli


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_aten_add_lists_its_overloads_and_no_unknown_row(tmp_path):
    r = run_cli("ops", "aten::add", "--format", "json", cwd=str(tmp_path))
    assert r.code == 0, r.err
    j = json.loads(r.out)
    assert [(s["overload"], s["class"]) for s in j["support"]] == [
        ("add.Scalar", "npu_kernel"), ("add.Tensor", "npu_kernel"), ("add.out", "npu_kernel")]
    assert j["aten_ops"] == ["add.Scalar", "add.Tensor", "add.out"] and j["no_default_overload"] == ["add"]
    text = run_cli("ops", "aten::add", cwd=str(tmp_path)).out
    assert "unknown" not in text, text
    assert "aten::add has no overload of its own (no add.default): its overloads are the rows below" in _flat(text)


def test_an_op_with_its_own_overload_keeps_its_row(tmp_path):
    for q, first in (("aten::relu", "relu"), ("aten::nanmean", "nanmean")):
        j = json.loads(run_cli("ops", q, "--format", "json", cwd=str(tmp_path)).out)
        assert j["support"][0]["overload"] == first and j["support"][0]["class"] != "unknown", q
        assert j["no_default_overload"] == []
        assert "has no overload of its own" not in run_cli("ops", q, cwd=str(tmp_path)).out
    r = run_cli("ops", "aten::no_such_op_xyz", "--format", "json", cwd=str(tmp_path))
    j = json.loads(r.out)
    assert r.code == 1 and [s["class"] for s in j["support"]] == ["unknown"] and j["no_default_overload"] == []


def test_the_default_release_is_named_with_why_and_how_to_see_others(tmp_path):
    r = run_cli("ops", "aten::add", cwd=str(tmp_path))
    n = len(kbops.releases())
    line = _flat(r.out).split(" aten::add has no overload")[0]
    assert line.startswith("aten::add — torch_npu 2.12.0.post3 (torch 2.12.0) the table is for torch_npu 2.12.0.post3 "
                           "(no torch pin found in the project;"), line
    assert line.endswith(f"; --torch-npu VERSION for another release, --all-versions for all {n}"), line
    j = json.loads(run_cli("ops", "aten::add", "--format", "json", cwd=str(tmp_path)).out)
    assert j["release_reason"].startswith("no torch pin found in the project") and j["known_releases"] == n


def test_a_release_given_or_all_versions_has_no_default_line(tmp_path):
    for args in (("--torch-npu", "2.7.1"), ("--all-versions",)):
        r = run_cli("ops", "aten::add", *args, cwd=str(tmp_path))
        assert r.code == 0 and "the table is for" not in r.out, args
    j = json.loads(run_cli("ops", "aten::add", "--torch-npu", "2.7.1", "--format", "json", cwd=str(tmp_path)).out)
    assert j["release_reason"] == "from --torch-npu" and j["torch_npu"] == "2.7.1.post11"
