"""``report --include``: a JSON file that no ascendify command wrote is a usage error (issue 22):
one line naming the file and what it is not, exit 2, nothing written (docs/cli.md: exit codes)."""

from __future__ import annotations

import json
import os

from tests.cli_util import run_cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(REPO, "examples", "cuda_project")


def test_unrelated_json_is_an_error_naming_the_file(tmp_path):
    junk = tmp_path / "fit.json"  # a name that says fit, content that is not
    junk.write_text(json.dumps({"hello": "world", "rows": [1, 2]}), encoding="utf-8")
    r = run_cli("report", EXAMPLE, "--include", str(junk), "--out-dir", str(tmp_path / "r"), cwd=str(tmp_path))
    assert r.code == 2, (r.code, r.err)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert lines[0].startswith("ascendify: error: ") and str(junk) in lines[0]
    assert "not an ascendify" in lines[0] and "fit" in lines[0] and "profile" in lines[0] and "diagnose" in lines[0]
    assert "Traceback" not in r.err and not (tmp_path / "r").exists()


def test_unrelated_json_with_from_is_an_error_too(tmp_path):
    run_cli("report", EXAMPLE, "--out-dir", str(tmp_path / "r"), cwd=str(tmp_path))
    junk = tmp_path / "x.json"
    junk.write_text("[1, 2, 3]", encoding="utf-8")
    r = run_cli("report", "--from", str(tmp_path / "r" / "report.json"), "--include", str(junk),
                "--out-dir", str(tmp_path / "r2"), cwd=str(tmp_path))
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1 and str(junk) in r.err, r.err
    assert not (tmp_path / "r2").exists()


def test_a_real_result_is_still_included(tmp_path):
    doctor = {"schema": "ascendify.doctor/1", "status": "fail", "stack_present": False, "checks": []}
    p = tmp_path / "d.json"
    p.write_text(json.dumps(doctor), encoding="utf-8")
    r = run_cli("report", EXAMPLE, "--include", str(p), "--out-dir", str(tmp_path / "r"), cwd=str(tmp_path))
    assert r.code == 0, r.err
    doc = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    assert "doctor" in doc["sections"] and "warning" not in r.err


def test_migrate_with_unrelated_include_fails_before_writing(tmp_path):
    junk = tmp_path / "j.json"
    junk.write_text('{"peak": 1}', encoding="utf-8")
    r = run_cli("migrate", EXAMPLE, "--out-dir", str(tmp_path / "m"), "--no-doctor", "--include", str(junk), cwd=str(tmp_path))
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1 and str(junk) in r.err, r.err
    assert not (tmp_path / "m").exists()


def test_the_diagnose_root_cause_names_the_first_finding_when_two_share_an_id(tmp_path):
    # two python-exception findings: the summary's root cause is the first, not the last one of that id
    diag = {"schema": "ascendify.diagnose/1", "summary": {"findings": 2, "files": 1, "root_cause": "python-exception"},
            "findings": [{"id": "python-exception", "title": "ValueError: Unknown speculative decoding method: eagle3",
                          "severity": "error", "role": "cause", "cause": "c", "fix": "f", "evidence": []},
                         {"id": "python-exception", "title": "RuntimeError: Engine core initialization failed",
                          "severity": "error", "role": "consequence", "cause": "c", "fix": "f", "evidence": []}]}
    p = tmp_path / "diag.json"
    p.write_text(json.dumps(diag), encoding="utf-8")
    r = run_cli("report", EXAMPLE, "--include", str(p), "--out-dir", str(tmp_path / "r"), cwd=str(tmp_path))
    assert r.code == 0, r.err
    html = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "root cause: <a href=\"#diag-python-exception\"><strong>ValueError: Unknown speculative decoding" in html
