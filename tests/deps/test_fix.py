"""fix for dependency files: the torch-npu pin in each file's style (golden files), re-parsed,
applied by fix --diff / --write / --out-dir and migrate; confirmed drop-in replacements only."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil

import pytest

from ascendify.deps import audit as A
from ascendify.deps.fix import apply_edits, verify
from ascendify.deps.parse import read_file
from ascendify.scan.finding import Edit

from ..cli_util import run_cli

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
CASES = [("requirements.in.txt", "requirements.txt"), ("pep621.in.toml", "pyproject.toml"), ("pep621_last.in.toml", "pyproject.toml"),
         ("pep621_inline.in.toml", "pyproject.toml"), ("poetry.in.toml", "pyproject.toml")]


def fixed_text(tmp_path, src_name: str, as_name: str, newline: str = "\n") -> str:
    with open(os.path.join(GOLDEN, src_name), encoding="utf-8") as fh:
        text = fh.read().replace("\n", newline)
    p = tmp_path / as_name
    p.write_bytes(text.encode("utf-8"))
    files = read_file(str(p), as_name)
    fs = A.audit(files)
    dep4 = [f for f in fs if f.code == "DEP004"]
    assert len(dep4) == 1 and dep4[0].fix is not None and dep4[0].fix.safe
    return apply_edits(text, list(dep4[0].fix.edits))


@pytest.mark.parametrize("src,as_name", CASES)
def test_golden_pin(tmp_path, src, as_name):
    got = fixed_text(tmp_path, src, as_name)
    with open(os.path.join(GOLDEN, src.replace(".in.", ".out.")), encoding="utf-8") as fh:
        want = fh.read()
    assert got == want
    kind = "pyproject" if as_name.endswith(".toml") else "requirements"
    assert verify(kind, got, as_name, ["torch-npu"]) is None
    # the fixed file has nothing left to pin: fixing it again changes nothing
    (tmp_path / as_name).write_text(got, encoding="utf-8")
    assert [f.code for f in A.audit(read_file(str(tmp_path / as_name), as_name)) if f.code == "DEP004"] == []


@pytest.mark.parametrize("src,as_name", CASES)
def test_crlf_kept(tmp_path, src, as_name):
    got = fixed_text(tmp_path, src, as_name, "\r\n")
    assert "\n" not in got.replace("\r\n", "")
    with open(os.path.join(GOLDEN, src.replace(".in.", ".out.")), encoding="utf-8") as fh:
        assert got == fh.read().replace("\n", "\r\n")


def test_verify_rejects_a_broken_edit():
    assert "does not parse" in verify("pyproject", "[project\n", "pyproject.toml", ["torch-npu"])
    assert "does not declare torch-npu" in verify("requirements", "torch==2.1.0\n", "requirements.txt", ["torch-npu"])
    with pytest.raises(ValueError):
        apply_edits("abc\n", [Edit("replace", "x", (1, 0), (1, 2)), Edit("replace", "y", (1, 1), (1, 3))])


def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    shutil.copy(os.path.join(GOLDEN, "requirements.in.txt"), root / "requirements.txt")
    (root / "requirements.txt").write_bytes((root / "requirements.txt").read_bytes().replace(b"\n", b"\r\n"))
    (root / "train.py").write_text("import torch\nx = torch.zeros(1).cuda()\n", encoding="utf-8")
    (root / "extra.txt").write_text("flash-attn==2.5.8\n", encoding="utf-8")
    with open(root / "requirements.txt", "ab") as fh:
        fh.write(b"-r extra.txt\r\n")
    return root


def test_scan_reports_dep_findings_in_every_format(tmp_path):
    root = project(tmp_path)
    r = run_cli(*["scan", str(root), "--no-cache", "--format", "json"])
    doc = json.loads(r.out)
    got = sorted((os.path.basename(f["path"]), f["line"], f["code"]) for f in doc["findings"] if f["code"].startswith("DEP"))
    assert got == [("extra.txt", 1, "DEP001"), ("requirements.txt", 3, "DEP004")]
    sarif = json.loads(run_cli(*["scan", str(root), "--no-cache", "--format", "sarif"]).out)
    res = [(x["ruleId"], x["locations"][0]["physicalLocation"]["region"]["startLine"]) for x in sarif["runs"][0]["results"]]
    assert ("DEP004", 3) in res and ("DEP001", 1) in res
    assert "DEP004" in {rule["id"] for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    import jsonschema

    from ..test_cli_scan import SARIF_SCHEMA

    with open(SARIF_SCHEMA, encoding="utf-8") as fh:
        jsonschema.Draft4Validator(json.load(fh)).validate(sarif)
    csv_out = run_cli(*["scan", str(root), "--no-cache", "--format", "csv"]).out
    rows = [(os.path.basename(r["file"]), r["start_line"], r["operation"]) for r in csv.DictReader(io.StringIO(csv_out)) if r["code"].startswith("DEP")]
    assert rows == [("extra.txt", "1", "manual"), ("requirements.txt", "3", "add torch-npu==2.1.0.post17 next to torch==2.1.0")]
    text = run_cli(*["scan", str(root), "--no-cache"]).out
    assert "requirements.txt:3:1: DEP004 [*] torch 2.1.0 is pinned but torch-npu is not" in text
    assert run_cli(*["scan", str(root), "--no-cache", "--select", "DEV", "--format", "json"]).out.count('"DEP') == 0


def test_fix_diff_write_and_out_dir(tmp_path):
    root = project(tmp_path)
    before = (root / "requirements.txt").read_bytes()
    r = run_cli(*["fix", str(root), "--no-cache"])
    assert '+torch-npu == 2.1.0.post17 ; platform_machine == "aarch64"' in r.out and "+x = torch.zeros(1).npu()" in r.out
    assert (root / "requirements.txt").read_bytes() == before  # --diff changes nothing
    out = tmp_path / "out"
    run_cli(*["fix", str(root), "--no-cache", "--out-dir", str(out)])
    migrated = (out / "requirements.txt").read_bytes()
    assert b'torch == 2.1.0 ; platform_machine == "aarch64"  # the framework\r\ntorch-npu == 2.1.0.post17 ; platform_machine == "aarch64"\r\n' in migrated
    assert (root / "requirements.txt").read_bytes() == before
    assert ".npu()" in (out / "train.py").read_text()
    log = json.loads((out / "ascendify-changes.json").read_text())
    rows = [(c["file"].rsplit("/", 1)[-1], c["code"], c["source_line"], c["migrated_line"]) for c in log["changes"] if c["code"].startswith("DEP")]
    assert rows == [("requirements.txt", "DEP004", 3, 3)]
    left = [(os.path.basename(f["path"]), f["code"]) for f in log["remaining"] if f["code"].startswith("DEP")]
    assert left == [("extra.txt", "DEP001")]
    assert log["summary"]["fixed"] == 2 and log["summary"]["open"] == 1
    # a scan of the copy finds the same DEP findings the run left
    doc = json.loads(run_cli(*["scan", str(out), "--no-cache", "--format", "json"]).out)
    assert [(os.path.basename(f["path"]), f["code"]) for f in doc["findings"] if f["code"].startswith("DEP")] == left
    run_cli(*["fix", str(root), "--no-cache", "--write"])
    assert (root / "requirements.txt").read_bytes() == migrated


def test_migrate_applies_the_pin(tmp_path):
    root = project(tmp_path)
    out = tmp_path / "m"
    run_cli(*["migrate", str(root), "--out-dir", str(out), "--no-doctor"])
    assert b"torch-npu == 2.1.0.post17" in (out / "project" / "requirements.txt").read_bytes()


def test_safe_replacement_is_applied_only_where_the_data_says(tmp_path, monkeypatch):
    entries = [dict(p) for p in A.packages()]
    for p in entries:
        if p["id"] == "gputil":
            p["safe_replacement"] = "npu-gputil-for-test"
    monkeypatch.setattr(A, "packages", lambda: tuple(entries))
    p = tmp_path / "requirements.txt"
    p.write_text("GPUtil==1.4.0  # monitoring\npynvml\n", encoding="utf-8")
    fs = A.audit(read_file(str(p), "requirements.txt"))
    assert [(f.code, f.fix is not None) for f in fs] == [("DEP001", True), ("DEP001", False)]
    assert apply_edits(p.read_text(), list(fs[0].fix.edits)) == "npu-gputil-for-test==1.4.0  # monitoring\npynvml\n"
    monkeypatch.undo()
    fs = A.audit(read_file(str(p), "requirements.txt"))
    assert [(f.code, f.fix) for f in fs] == [("DEP001", None), ("DEP001", None)]  # the shipped data confirms no drop-in replacement


def test_a_requirements_file_named_explicitly_is_audited_not_skipped(tmp_path):
    p = tmp_path / "requirements-gpu.txt"
    p.write_text("xformers\n", encoding="utf-8")
    r = run_cli("scan", str(p), "--no-cache")
    assert "not a Python file" not in r.err
    assert "requirements-gpu.txt:1:1: DEP001 xformers is CUDA-only" in r.out and r.code == 1


def test_an_audit_failure_is_a_problem_line_not_a_lost_scan(tmp_path, monkeypatch):
    import ascendify.deps as D

    def boom(paths, settings):
        raise RuntimeError("bad data")

    monkeypatch.setattr(D, "audit_paths", boom)
    (tmp_path / "t.py").write_text("import torch\nx = torch.zeros(1).cuda()\n", encoding="utf-8")
    r = run_cli("scan", str(tmp_path), "--no-cache")
    assert "t.py:2:20: DEV001" in r.out
    assert "dependency audit failed (RuntimeError: bad data)" in r.err and r.code == 1
