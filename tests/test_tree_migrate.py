"""`migrate` takes the scan options and its exit code follows --fail-on (issue 11)."""

from __future__ import annotations

import json

import pytest

from .cli_util import run_cli

FIXABLE = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"
MANUAL = 'import torch\ntorch.cuda.nvtx.range_push("step")\n'  # DEV014: error, no automatic fix
TF32 = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"  # DEV020: warning, unsafe fix


@pytest.fixture
def project(tmp_path):
    p = tmp_path / "proj"
    (p / "pkg").mkdir(parents=True)
    (p / "vendor").mkdir()
    (p / "pkg" / "train.py").write_text(FIXABLE)
    (p / "pkg" / "prof.py").write_text(MANUAL)
    (p / "vendor" / "third.py").write_text(MANUAL)
    return p


def migrate(tmp_path, *args):
    r = run_cli("migrate", "proj", "--out-dir", "out", "--no-doctor", *args, cwd=str(tmp_path))
    assert "Traceback" not in r.err and "internal error" not in r.err and "No such option" not in r.err, r.err
    return r


def _report(tmp_path):
    return json.loads((tmp_path / "out" / "report" / "report.json").read_text())


def test_exit_code_follows_fail_on(tmp_path, project):
    assert migrate(tmp_path).code == 1  # DEV014 (error) is left for a person; default --fail-on error
    assert migrate(tmp_path, "--fail-on", "never").code == 0
    (project / "pkg" / "prof.py").write_text(TF32)
    (project / "vendor" / "third.py").write_text("x = 1\n")
    assert migrate(tmp_path).code == 0  # only a warning is left
    assert migrate(tmp_path, "--fail-on", "warning").code == 1


def test_fixes_do_not_count_against_fail_on(tmp_path, project):
    (project / "pkg" / "prof.py").unlink()
    (project / "vendor" / "third.py").unlink()
    r = migrate(tmp_path, "--fail-on", "error")
    assert r.code == 0, r.err  # the DEV001 error was fixed
    assert ".npu()" in (tmp_path / "out" / "project" / "pkg" / "train.py").read_text()


def test_select_ignore_exclude_and_jobs(tmp_path, project):
    r = migrate(tmp_path, "--select", "DEV", "--ignore", "DEV014", "--exclude", "vendor", "-j", "2", "--no-cache")
    assert r.code == 0, r.err
    doc = _report(tmp_path)
    assert sorted({(d["path"], d["code"]) for d in doc["findings"]}) == [("proj/pkg/train.py", "DEV001")]
    assert doc["settings"]["select"] == ["DEV"] and doc["settings"]["ignore"] == ["DEV014"]
    # excluded files are not scanned, but still copied as they are
    assert (tmp_path / "out" / "project" / "vendor" / "third.py").read_text() == MANUAL
    r = migrate(tmp_path, "--select", "DEV014", "--exclude", "vendor")
    assert r.code == 1
    assert sorted({d["path"] for d in _report(tmp_path)["findings"]}) == ["proj/pkg/prof.py"]


def test_unknown_code_is_a_usage_error(tmp_path, project):
    r = run_cli("migrate", "proj", "--out-dir", "out", "--no-doctor", "--select", "NOPE1", cwd=str(tmp_path))
    assert r.code == 2 and "unknown rule code or prefix 'NOPE1'" in r.err
    assert not (tmp_path / "out").exists()
