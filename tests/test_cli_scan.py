"""`ascendify scan`: output formats, exit codes, selection, suppression, config, bad input."""

from __future__ import annotations

import csv
import io
import json
import os

import jsonschema
import pytest

from .cli_util import run_cli

HERE = os.path.dirname(__file__)
SARIF_SCHEMA = os.path.join(HERE, "data", "sarif", "sarif-2.1.0-rtm.5.json")

CODE = """import torch

model = torch.nn.Linear(2, 2).cuda()
x = torch.ones(2).cuda()  # noqa: DEV001
y = torch.ones(2).cuda()  # noqa
z = torch.ones(2).cuda()  # noqa: XYZ123
"""


@pytest.fixture
def proj(tmp_path):
    (tmp_path / "train.py").write_text(CODE)
    (tmp_path / "clean.py").write_text("import torch\nx = torch.ones(2)\n")
    return tmp_path


def test_text_format_lines_and_summary(proj):
    r = run_cli("scan", ".", "--select", "DEV001", cwd=str(proj))
    lines = r.out.splitlines()
    assert lines[0] == "train.py:3:31: DEV001 [*] `.cuda()` moves to a CUDA device; on Ascend use `.npu()`"
    assert lines[1] == "train.py:6:19: DEV001 [*] `.cuda()` moves to a CUDA device; on Ascend use `.npu()`"
    assert lines[2] == ""
    assert lines[3].startswith("Found 2 finding(s) in 1 of 2 file(s): 2 error.")
    assert "low    train.py: 2 findings, 2 fixed safely by `ascendify fix`; nothing left for a person" in r.out
    assert r.code == 1
    assert "\x1b[" not in r.out  # no colour when not a TTY


def test_exit_codes(proj):
    assert run_cli("scan", "clean.py", cwd=str(proj)).code == 0
    assert run_cli("scan", "train.py", "--select", "DEV001", "--fail-on", "never", cwd=str(proj)).code == 0
    bad = run_cli("scan", "train.py", "--select", "NOPE9", cwd=str(proj))
    assert bad.code == 2 and "unknown rule code or prefix 'NOPE9'" in bad.err and "Traceback" not in bad.err
    missing = run_cli("scan", "missing.py", cwd=str(proj))
    assert missing.code == 2 and "missing.py: no such file or folder" in missing.err
    assert missing.out == ""  # no "No files scanned." / target line after the one error line
    fixed = run_cli("fix", "missing.py", cwd=str(proj))
    assert fixed.code == 2 and fixed.out == "" and fixed.err.strip() == "ascendify: error: missing.py: no such file or folder"
    usage = run_cli("scan", "--format", "xml", cwd=str(proj))
    assert usage.code == 2


def test_ignore_and_prefix_selection(proj):
    r = run_cli("scan", "train.py", "--select", "DEV", "--ignore", "DEV001", "--format", "json", cwd=str(proj))
    assert json.loads(r.out)["findings"] == []
    r = run_cli("scan", "train.py", "--select", "DEV", "--format", "json", cwd=str(proj))
    assert {f["code"] for f in json.loads(r.out)["findings"]} >= {"DEV001"}


def test_json_format(proj):
    r = run_cli("scan", ".", "--select", "DEV001", "--format", "json", cwd=str(proj))
    doc = json.loads(r.out)
    assert doc["tool"] == "ascendify"
    f = doc["findings"][0]
    assert (f["path"], f["line"], f["col"], f["code"], f["severity"], f["category"], f["fixable"]) == ("train.py", 3, 30, "DEV001", "error", "device", True)  # at `.cuda`, the token to change
    assert f["fix"]["safe"] is True and f["fix"]["edits"][0]["kind"] == "attr"
    s = doc["summary"]
    assert (s["files_scanned"], s["findings"], s["fixable"], s["fixable_share"]) == (2, 2, 2, 1.0)
    assert s["by_severity"] == {"error": 2, "silent": 0, "warning": 0, "info": 0}
    assert s["by_category"] == {"device": 2}
    efforts = {x["path"]: x["effort"] for x in s["files"]}
    assert efforts == {"clean.py": "none", "train.py": "low"}


def test_sarif_validates_against_schema(proj):
    r = run_cli("scan", ".", "--select", "DEV001", "--format", "sarif", cwd=str(proj))
    log = json.loads(r.out)
    with open(SARIF_SCHEMA, encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft4Validator(schema).validate(log)
    res = log["runs"][0]["results"]
    assert [(x["ruleId"], x["locations"][0]["physicalLocation"]["region"]["startLine"]) for x in res] == [("DEV001", 3), ("DEV001", 6)]
    assert log["runs"][0]["tool"]["driver"]["rules"][0]["id"] == "DEV001"
    # a deliberately broken log must fail validation (the check can fail)
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(log)


def test_csv_change_list(proj):
    r = run_cli("scan", "train.py", "--select", "DEV001", "--format", "csv", cwd=str(proj))
    rows = list(csv.reader(io.StringIO(r.out)))
    assert rows[0] == ["file", "cell", "start_line", "end_line", "code", "severity", "operation", "message"]
    assert rows[1][:7] == ["train.py", "", "3", "3", "DEV001", "error", "replace .cuda() with .npu()"]


def test_output_file(proj, tmp_path):
    out = tmp_path / "r.json"
    r = run_cli("scan", "train.py", "--select", "DEV001", "--format", "json", "-o", str(out), cwd=str(proj))
    assert r.out == "" and json.loads(out.read_text())["summary"]["findings"] == 2


def test_pyproject_config_and_per_file_ignores(proj):
    (proj / "pyproject.toml").write_text('[tool.ascendify]\nselect = ["DEV001"]\n[tool.ascendify.per-file-ignores]\n"train.py" = ["DEV"]\n')
    (proj / "other.py").write_text("import torch\nm = torch.nn.Linear(1, 1).cuda()\n")
    r = run_cli("scan", ".", "--format", "json", cwd=str(proj))
    doc = json.loads(r.out)
    assert [(f["path"], f["line"]) for f in doc["findings"]] == [("other.py", 2)]
    assert doc["settings"]["config_file"].endswith("pyproject.toml")
    # --no-config restores the default (all rules, no per-file-ignores)
    r = run_cli("scan", "train.py", "--no-config", "--select", "DEV001", "--format", "json", cwd=str(proj))
    assert len(json.loads(r.out)["findings"]) == 2


def test_bad_config_is_one_line(proj):
    (proj / "pyproject.toml").write_text("[tool.ascendify]\ntarget = 'gpu'\n")
    r = run_cli("scan", ".", cwd=str(proj))
    assert r.code == 2 and r.err.count("\n") == 1 and "pyproject.toml: target must be one of npu, agnostic" in r.err
    (proj / "pyproject.toml").write_text("[tool.ascendify]\nselekt = ['DEV']\n")
    r = run_cli("scan", ".", cwd=str(proj))
    assert r.code == 2 and "unknown key [tool.ascendify] selekt" in r.err
    (proj / "pyproject.toml").write_text("[tool.ascendify\n")
    r = run_cli("scan", ".", "--config", "pyproject.toml", cwd=str(proj))
    assert r.code == 2 and "invalid TOML" in r.err


def test_rules_and_rule_pages():
    r = run_cli("rules")
    assert r.code == 0 and "DEV001 [*] error" in r.out and "SYN001" in r.out
    r = run_cli("rule", "dev001", "--format", "markdown")
    assert r.code == 0
    for heading in ("# DEV001 tensor-cuda-method", "## What it finds", "## Why it matters on NPU", "## Example", "## Fix", "## Source"):
        assert heading in r.out
    r = run_cli("rule", "dev001")  # not a terminal: plain text (tests/rules/test_rulepage.py)
    assert r.code == 0 and r.out.startswith("DEV001  tensor-cuda-method\n") and "\nWhy it matters on NPU\n" in r.out
    r = run_cli("rule", "DEV999")
    assert r.code == 2 and "no rule 'DEV999'" in r.err


def test_default_excludes_and_exclude_option(proj):
    venv = proj / ".venv" / "lib"
    venv.mkdir(parents=True)
    (venv / "site.py").write_text("import torch\ntorch.ones(1).cuda()\n")
    (proj / "gen").mkdir()
    (proj / "gen" / "g.py").write_text("import torch\ntorch.ones(1).cuda()\n")
    r = run_cli("scan", ".", "--select", "DEV001", "--exclude", "gen", "--format", "json", cwd=str(proj))
    assert {f["path"] for f in json.loads(r.out)["findings"]} == {"train.py"}


def test_lazy_command_listing():
    r = run_cli("--help")
    for name in ("scan", "fix", "rules", "rule", "ops", "probe", "doctor", "diagnose", "profile", "export", "compare", "migrate"):
        assert f"  {name}" in r.out


def test_unavailable_lazy_command_is_one_line(monkeypatch):
    from ascendify import cli as cli_mod

    monkeypatch.setitem(cli_mod.LAZY_COMMANDS, "ghost", ("ascendify.no_such_module", "ghost", "A missing command."))
    r = run_cli("ghost", "x")
    assert r.code == 2 and r.err.startswith("ascendify: error: 'ascendify ghost' is not available in this installation (ModuleNotFoundError")


def test_missing_optional_dependency_is_one_line(monkeypatch):
    from ascendify.scan import cli as scan_cli

    def needs_torch(*a, **k):
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(scan_cli, "_run_scan", needs_torch)
    r = run_cli("scan", ".")
    assert r.code == 2 and r.err.strip().startswith("ascendify: error: this command needs the Python package 'torch'")


def test_bad_target_version_and_unknown_chip(proj):
    r = run_cli("scan", "train.py", "--torch-npu", "banana", cwd=str(proj))
    assert r.code == 2 and "torch_npu version 'banana' is not a version" in r.err
    r = run_cli("scan", "train.py", "--select", "DEV001", "--chip", "Ascend999", cwd=str(proj))
    assert r.code == 1 and "chip 'Ascend999' is not in the chip table" in r.err
    r = run_cli("scan", "train.py", "--select", "DEV001", "--chip", "Ascend910B3", "--torch-npu", "2.7.1.post11", cwd=str(proj))
    assert r.code == 1 and "warning" not in r.err


def test_unverified_rule_page_says_so():
    from ascendify.rules.registry import load_rules

    rules = load_rules()
    unverified = [c for c, r in rules.items() if not r.verified]
    assert unverified  # the README promises these pages exist and say so
    assert "*Unverified:" in run_cli("rule", unverified[0], "--format", "markdown").out
    verified = next(c for c, r in rules.items() if r.verified)
    assert "Unverified" not in run_cli("rule", verified, "--format", "markdown").out
