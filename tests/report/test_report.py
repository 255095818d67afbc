"""`ascendify migrate` / `report`: report.json content, HTML content, escaping."""

from __future__ import annotations

import html
import json
import os
import re

import pytest

from ..cli_util import run_cli

SRC = '''import torch

BANNER = "<script>alert('pwned')</script>"
model = torch.nn.Linear(2, 2).cuda()
x = torch.ones(2)
y = x.cuda()  # noqa
z = x.cuda(non_blocking=True)
'''


@pytest.fixture
def project(tmp_path):
    p = tmp_path / "proj"
    (p / "pkg").mkdir(parents=True)
    (p / "pkg" / "train.py").write_text(SRC)
    (p / "pkg" / "clean.py").write_text("import torch\n")
    (p / "notes.txt").write_text("not python\n")
    return p


def migrate(tmp_path, project, *args):
    r = run_cli("migrate", str(project), "--out-dir", str(tmp_path / "out"), "--no-doctor", *args, cwd=str(tmp_path))
    assert r.code == 0, r.err
    return r, json.loads((tmp_path / "out" / "report" / "report.json").read_text())


def test_migrate_writes_copy_report_and_changelog(tmp_path, project):
    r, doc = migrate(tmp_path, project)
    out = tmp_path / "out"
    assert f"report:        {os.path.join(str(out), 'report', 'index.html')}" in r.out
    assert (out / "project" / "notes.txt").read_text() == "not python\n"
    # torch_npu 2.7.1 (the default target) is loaded by `import torch`: the fix adds no import
    migrated = (out / "project" / "pkg" / "train.py").read_text()
    assert ".npu()" in migrated and "import torch_npu" not in migrated
    assert (project / "pkg" / "train.py").read_text() == SRC  # original untouched
    assert (out / "report" / "changes.csv").read_text().splitlines()[0] == "file,cell,start_line,end_line,code,operation,message,safe,source_line,migrated_line"
    assert doc["schema"] == "ascendify-report/1"
    s = doc["summary"]
    assert s["findings"] == len(doc["findings"]) and s["fixed"] == sum(d["fixed"] for d in doc["findings"])
    assert doc["sections"]["doctor"] == {"status": "not run", "reason": "--no-doctor given"}
    assert doc["sections"]["probe"]["status"] == "not run"
    # the plan is ordered as the field guides advise: environment first, multi-card late
    titles = [st["title"] for st in doc["plan"]]
    assert titles[0].startswith("Get the environment right") and titles.index("Then turn on AMP, with loss scaling and gradient clipping") < titles.index("Then many cards: NCCL to HCCL")


def test_index_counts_equal_json_and_every_finding_is_at_its_line(tmp_path, project):
    _, doc = migrate(tmp_path, project)
    rep = tmp_path / "out" / "report"
    index = (rep / "index.html").read_text()
    s = doc["summary"]
    assert f'<div class="num" id="total-findings">{s["findings"]}</div>' in index
    assert f'<div class="num" id="fixed-count">{s["fixed"]}</div><div>fixed automatically' in index
    pages = {f["path"]: f["page"] for f in s["files"]}
    for d in doc["findings"]:
        page = (rep / pages[d["path"]]).read_text()
        # the finding's note follows the row of its line (before the next source line)
        m = re.search(rf'<tr id="L{d["line"]}".*?(?=<tr id="L{d["line"] + 1}"|</table>)', page, re.S)
        assert m and f'>{d["code"]}</a>' in m.group(0)
        shown = html.unescape(re.sub(r"<[^>]+>", "", m.group(0)))
        assert d["message"].replace("`", "") in shown
        assert (rep / "rules" / f'{d["code"]}.html').exists()
        assert f'href="{pages[d["path"]]}#L{d["line"]}"' in index


def test_hostile_names_and_code_render_inert(tmp_path):
    p = tmp_path / "evil"
    p.mkdir()
    name = '<img src=x onerror=alert(1)>.py'
    (p / name).write_text(SRC)
    r, doc = migrate(tmp_path, p)
    rep = tmp_path / "out" / "report"
    for page in [rep / "index.html"] + list((rep / "files").iterdir()):
        text = page.read_text()
        assert "<script>alert" not in text and "<img src=x" not in text
        assert "onerror=alert(1)" not in text.replace("&lt;img src=x onerror=alert(1)&gt;", "")
    file_page = (rep / "files" / "0.html").read_text()
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in file_page


def test_report_from_json_with_includes(tmp_path, project):
    migrate(tmp_path, project)
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps({"command": "probe", "verdict": "2 ops fall back to CPU", "ops": [{"op": "aten::linalg_inv_ex", "class": "cpu_fallback"}]}))
    r = run_cli("report", "--from", str(tmp_path / "out" / "report" / "report.json"), "--include", str(probe), "--out-dir", str(tmp_path / "r2"), cwd=str(tmp_path))
    assert r.code == 0, r.err
    index = (tmp_path / "r2" / "index.html").read_text()
    assert "2 ops fall back to CPU" in index and "aten::linalg_inv_ex" in index
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    r = run_cli("report", "--from", str(tmp_path / "out" / "report" / "report.json"), "--include", str(bad), "--out-dir", str(tmp_path / "r3"), cwd=str(tmp_path))
    assert r.code == 2 and "bad.json: not JSON" in r.err


def test_migrate_refuses_output_inside_project(tmp_path, project):
    r = run_cli("migrate", str(project), "--out-dir", str(project / "out"), cwd=str(tmp_path))
    assert r.code == 2 and "must be outside the project" in r.err


def test_environment_step_follows_doctor(tmp_path, project):
    from ascendify.report.build import _environment_status

    step = {"status": "unknown"}
    _environment_status(step, {"status": "fail", "stack_present": True, "checks": [
        {"id": "matrix.cann", "title": "torch_npu ↔ CANN", "status": "fail", "found": "torch_npu 2.7.1 needs CANN 9.0.0; installed 8.2.RC1"},
        {"id": "python.version", "status": "ok"}]})
    assert step["status"] == "todo" and "needs CANN 9.0.0" in step["note"]
    _environment_status(step, {"status": "ok", "stack_present": True, "checks": [{"id": "a", "status": "ok"}]})
    assert step["status"] == "done"
    _environment_status(step, {"status": "ok", "stack_present": False, "checks": []})
    assert step["status"] == "unknown" and "no Ascend stack" in step["note"]
    # migrate runs the real doctor (no Ascend stack on this machine) and shows its section
    r = run_cli("migrate", str(project), "--out-dir", str(tmp_path / "o2"), cwd=str(tmp_path))
    assert r.code == 0, r.err
    doc = json.loads((tmp_path / "o2" / "report" / "report.json").read_text())
    assert doc["sections"]["doctor"]["schema"] == "ascendify.doctor/1"
    assert doc["plan"][0]["status"] == "unknown"
    index = (tmp_path / "o2" / "report" / "index.html").read_text()
    assert '<td>Python</td><td class="st-ok">ok</td>' in index and "no Ascend stack on the machine that made this report" in index


def test_notebook_findings_are_shown_by_cell(tmp_path):
    p = tmp_path / "nbproj"
    p.mkdir()
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["%matplotlib inline\n", "import torch\n"]},
        {"cell_type": "markdown", "metadata": {}, "source": ["notes"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["x = torch.ones(2)\n", "y = x.cuda()\n", "z = x.cuda()\n"]}]}
    (p / "nb.ipynb").write_text(json.dumps(nb))
    _, doc = migrate(tmp_path, p, "--torch-npu", "2.4.0")  # not auto-loaded: the fix adds `import torch_npu`
    dev = [d for d in doc["findings"] if d["code"] == "DEV001"]
    assert [d["where"] for d in dev] == ["nbproj/nb.ipynb:cell 2:2", "nbproj/nb.ipynb:cell 2:3"]
    # the added import is shown once, with the first fixed finding of the file
    assert ["import torch_npu" in (d["diff"] or "") for d in dev] == [True, False]
    page = (tmp_path / "out" / "report" / "files" / "0.html").read_text()
    assert "<td>Cell 2</td>" in page and "%matplotlib inline" in page
    assert "ascendify cell" not in page and "ascendify-magic" not in page
    index = (tmp_path / "out" / "report" / "index.html").read_text()
    assert ">nbproj/nb.ipynb:cell 2:2</a>" in index
