"""The project checks (issue 19): the cross-file rules are checks in rules/ over the model's facts,
declared in the rule data (``cross_file``), and what a helper's findings are to its callers is said
by the rules' data (``work``, ``builds_cuda``), not by codes in semantic/."""

from __future__ import annotations

import dataclasses
import json

from ascendify.rules.registry import PROJECT_CHECKS, load_checks, load_rules
from tests.cli_util import run_cli

HELPER = "import torch\n\n\ndef sync():\n    torch.cuda.synchronize()\n"
MAIN = "from helper import sync\n\nsync()\n"


def _project(tmp_path):
    (tmp_path / "helper.py").write_text(HELPER, encoding="utf-8")
    (tmp_path / "main.py").write_text(MAIN, encoding="utf-8")
    return tmp_path


def _codes(tmp_path, *args):
    r = run_cli("scan", ".", "--format", "json", "--fail-on", "never", "--no-cache", "--no-config", "-j", "1", *args, cwd=str(tmp_path))
    assert r.code == 0, r.err
    return sorted((f["path"], f["line"], f["code"]) for f in json.loads(r.out)["findings"])


def test_each_project_check_is_declared_in_the_rule_data():
    load_checks()
    rules = load_rules()
    declared = {c for c, r in rules.items() if r.cross_file}
    assert declared == set(PROJECT_CHECKS) == {"DEV026", "DST001", "DEV006", "EXT017", "EXT019"}
    # `project = true`: nothing but the project pass reports it (a project check, or the dependency audit)
    assert {c for c, r in rules.items() if r.project and not c.startswith("DEP")} == {"DEV026", "EXT019"}


def test_what_a_helpers_findings_are_is_rule_data():
    rules = load_rules()
    assert rules["DEV008"].work is True and rules["DST001"].work is True and rules["AMP001"].work is True
    assert rules["DEV024"].work == "param-default"  # a helper's `device="cuda"` default moves its callers' tensors
    assert rules["DEV018"].work is False and rules["IMP002"].work is False and rules["DST003"].work is False
    assert rules["OPS001"].work is False and rules["DTY001"].work is False  # not CUDA work: other categories
    assert rules["DEV027"].work is True  # a device rule in newer_apis.toml
    assert {c: r.builds_cuda for c, r in rules.items() if r.builds_cuda} == {"EXT001": True, "EXT006": True, "EXT007": "import"}


def test_the_call_site_finding_follows_the_work_field(tmp_path, monkeypatch):
    proj = _project(tmp_path)
    assert ("main.py", 3, "DEV026") in _codes(proj)
    # the same project with DEV008 (torch.cuda.synchronize) declared as no work: no DEV026 at the call
    import ascendify.scan.engine as engine

    rules = dict(load_rules())
    rules["DEV008"] = dataclasses.replace(rules["DEV008"], work=False)
    monkeypatch.setattr(engine, "load_rules", lambda: rules)
    got = _codes(proj)
    assert ("helper.py", 5, "DEV008") in got and ("main.py", 3, "DEV026") not in got


def test_a_project_check_whose_rule_does_not_declare_it_does_not_run(tmp_path, monkeypatch):
    proj = _project(tmp_path)
    import ascendify.scan.engine as engine

    rules = dict(load_rules())
    rules["DEV026"] = dataclasses.replace(rules["DEV026"], cross_file=False)
    monkeypatch.setattr(engine, "load_rules", lambda: rules)
    assert ("main.py", 3, "DEV026") not in _codes(proj)
    assert ("helper.py", 5, "DEV008") in _codes(proj)


def test_select_noqa_and_the_helpers_rule_left_out(tmp_path):
    proj = _project(tmp_path)
    # cross-file work is computed with every device rule whatever --select says, and filtered at output
    assert _codes(proj, "--select", "DEV026") == [("main.py", 3, "DEV026")]
    assert ("main.py", 3, "DEV026") not in _codes(proj, "--ignore", "DEV026")
    (proj / "main.py").write_text("from helper import sync\n\nsync()  # noqa: DEV026\n", encoding="utf-8")
    assert ("main.py", 3, "DEV026") not in _codes(proj)
    (proj / "main.py").write_text("from helper import sync\n\nsync()  # noqa: E501\n", encoding="utf-8")
    assert ("main.py", 3, "DEV026") in _codes(proj)  # another tool's code hides nothing of ours
