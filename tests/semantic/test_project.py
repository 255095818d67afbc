"""The project pass: module summaries joined after the scan (DEV026, cross-module DST001/DEV006)."""

from __future__ import annotations

import json
import os
import shutil

import jsonschema
import pytest

from ascendify.semantic.project import module_names
from tests.cli_util import run_cli

HERE = os.path.dirname(os.path.abspath(__file__))
HELPERS = os.path.join(HERE, "families", "cross_module_helpers")
SARIF_SCHEMA = os.path.join(os.path.dirname(HERE), "data", "sarif", "sarif-2.1.0-rtm.5.json")


@pytest.fixture()
def proj(tmp_path):
    dst = tmp_path / "proj"
    shutil.copytree(HELPERS, dst)
    return dst


def _scan_json(cwd, *args):
    r = run_cli("scan", ".", "--format", "json", "--fail-on", "never", *args, cwd=str(cwd))
    assert r.code == 0, r.err
    return json.loads(r.out)["findings"]


def test_call_site_names_the_helper_and_its_findings(proj):
    found = [f for f in _scan_json(proj, "--no-cache") if f["code"] == "DEV026"]
    by_line = {f["line"]: f for f in found}
    assert sorted(by_line) == [7, 8, 9, 10]
    setup = by_line[7]
    assert setup["path"] == "train.py" and setup["severity"] == "error"
    assert "utils/dist.py" in setup["message"] and "setup_distributed" in setup["message"]
    work = [r for r in setup["related"] if r.get("kind") != "import"]
    assert sorted((r["path"], r["line"]) for r in work) == [("utils/dist.py", 6), ("utils/dist.py", 7)]
    # the last related location says why: the definition the call resolves to, and how Python finds its module
    why = setup["related"][-1]
    assert why["kind"] == "import" and (why["path"], why["line"]) == ("utils/dist.py", 5)
    assert why["message"].startswith("`setup_distributed` resolves to the function `setup_distributed` in utils/dist.py")
    assert "`utils.dist` is utils/dist.py" in why["message"]
    # train_step() does no CUDA work itself: it calls _sync(), which does
    assert [(r["path"], r["line"]) for r in by_line[9]["related"] if r.get("kind") != "import"] == [("utils/dist.py", 11)]
    # AMP001 in the class is a silent downgrade, not an error
    assert by_line[8]["severity"] == "silent" and "silently wrong" in by_line[8]["message"]


def test_sarif_carries_related_locations_and_validates(proj):
    r = run_cli("scan", ".", "--format", "sarif", "--fail-on", "never", "--no-cache", cwd=str(proj))
    log = json.loads(r.out)
    with open(SARIF_SCHEMA, encoding="utf-8") as fh:
        jsonschema.Draft4Validator(json.load(fh)).validate(log)
    res = [x for x in log["runs"][0]["results"] if x["ruleId"] == "DEV026"]
    assert len(res) == 4
    locs = res[0]["relatedLocations"]
    assert locs and all(loc["physicalLocation"]["artifactLocation"]["uri"].startswith("utils/") for loc in locs)


def test_joined_result_follows_the_summaries_it_used(proj, tmp_path):
    """The per-file cache stays valid: an untouched train.py loses its DEV026 once the helper is fixed."""
    cache = ["--cache-dir", str(tmp_path / "cache")] if "--cache-dir" in run_cli("scan", "--help").out else []
    env_cache = str(tmp_path / "xdg")
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = env_cache
    try:
        first = [f for f in _scan_json(proj, *cache) if f["code"] == "DEV026"]
        warm = [f for f in _scan_json(proj, *cache) if f["code"] == "DEV026"]
        assert first == warm and len(first) == 4
        dist = proj / "utils" / "dist.py"
        dist.write_text(dist.read_text().replace("torch.cuda.synchronize()", "pass").replace("torch.cuda.set_device(rank)", "pass")
                        .replace('"nccl"', '"hccl"'))
        after = {f["line"] for f in _scan_json(proj, *cache) if f["code"] == "DEV026"}
        assert after == {8, 10}  # the amp helpers still need work; setup_distributed and train_step no longer
    finally:
        if old is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = old


def test_noqa_and_ignore_apply_to_cross_file_findings(proj):
    t = proj / "train.py"
    t.write_text(t.read_text().replace("setup_distributed(rank)  # expect: DEV026", "setup_distributed(rank)  # noqa: DEV026"))
    lines = {f["line"] for f in _scan_json(proj, "--no-cache") if f["code"] == "DEV026"}
    assert lines == {8, 9, 10}
    assert not [f for f in _scan_json(proj, "--no-cache", "--ignore", "DEV026") if f["code"] == "DEV026"]


def test_report_links_related_locations(proj, tmp_path):
    r = run_cli("migrate", ".", "--out-dir", str(tmp_path / "out"), "--no-doctor", "--fail-on", "never", cwd=str(proj))
    assert r.code == 0, r.err
    doc = json.loads((tmp_path / "out" / "report" / "report.json").read_text())
    pages = {f["path"]: f["page"] for f in doc["summary"]["files"]}
    page = (tmp_path / "out" / "report" / pages["train.py"]).read_text()
    assert f'href="../{pages["utils/dist.py"]}#L7"' in page


@pytest.mark.parametrize("rel,names", [
    ("pkg/utils/dist.py", ["pkg.utils.dist", "utils.dist", "dist"]),
    ("pkg/__init__.py", ["pkg"]),
    ("src/my-lib/pkg/mod.py", ["pkg.mod", "mod"]),
])
def test_module_names(rel, names):
    assert module_names(rel) == names


def test_a_helper_called_from_many_modules_is_a_library_utility(tmp_path):
    (tmp_path / "util.py").write_text("import torch\n\n\ndef sync():\n    torch.cuda.synchronize()\n")
    for i in range(9):
        (tmp_path / f"step{i}.py").write_text("from util import sync\n\n\ndef run():\n    sync()\n")
    assert not [f for f in _scan_json(tmp_path, "--no-cache") if f["code"] == "DEV026"]
    for i in range(2, 9):
        (tmp_path / f"step{i}.py").unlink()
    found = [f for f in _scan_json(tmp_path, "--no-cache") if f["code"] == "DEV026"]
    assert sorted(f["path"] for f in found) == ["step0.py", "step1.py"]
