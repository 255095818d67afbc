"""Fixes whose result holds: what fix writes parses on Python 3.9-3.11, lands on tuples as on lists,
and is never code that one of our own rules says raises on an Ascend host (issues 19 and 23)."""

from __future__ import annotations

import ast
import os
import textwrap

import pytest

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source, requote_strings
from ascendify.scan.source import read_source


def _fix(tmp_path, code: str, target: str = "npu", unsafe: bool = False, **kw):
    p = tmp_path / "train.py"
    p.write_text(textwrap.dedent(code).lstrip("\n"), encoding="utf-8")
    s = Settings(target=target, unsafe_fixes=unsafe, **kw).validate()
    src = read_source(str(p))
    findings = analyze_source(src, "train.py", s)
    text, applied, remaining, _unsafe, error = fix_source(src, findings, s, "train.py")
    assert error is None, error
    return text, findings, remaining


@pytest.mark.parametrize("seq,want", [("('cuda',)", "('cuda', 'npu',)"), ("('cuda', 'cpu')", "('cuda', 'npu', 'cpu')"),
                                      ("['cuda']", "['cuda', 'npu']")])
def test_agnostic_device_type_test_with_a_tuple_operand_is_fixed(tmp_path, seq, want):
    text, _f, remaining = _fix(tmp_path, f"""
        import torch


        def use_scaler(device, amp_dtype):
            return device.type in {seq} and amp_dtype == torch.float16
        """, target="agnostic")
    assert f"device.type in {want} and" in text
    assert not [f for f in remaining if f.code == "DEV023"]


def test_a_safe_fix_that_does_not_land_is_remaining(tmp_path, monkeypatch):
    from ascendify.fix import apply

    real = apply._edit_ops
    monkeypatch.setattr(apply, "_edit_ops", lambda e, text, a, b: None if "npu" in e.text else real(e, text, a, b))
    _text, findings, remaining = _fix(tmp_path, """
        import torch


        def use_scaler(device):
            torch.cuda.synchronize()  # a fix that does land
            return device.type in ('cuda',)
        """, target="agnostic")
    assert [f.code for f in findings if f.code == "DEV023" and f.fix is not None] == ["DEV023"]
    assert [f.code for f in remaining if f.code == "DEV023"] == ["DEV023"]  # not counted as done, not vanished


def test_agnostic_rewrite_inside_a_double_quoted_fstring_uses_single_quotes(tmp_path):
    text, _f, _r = _fix(tmp_path, """
        import torch


        def report():
            print(f"cuda: {torch.cuda.is_available()}")
            print(f'cuda: {torch.cuda.is_available()}')
        """, target="agnostic")
    assert "print(f\"cuda: {(DEVICE_TYPE != 'cpu')}\")" in text
    assert "print(f'cuda: {(DEVICE_TYPE != \"cpu\")}')" in text
    for line in text.splitlines():  # what Python < 3.12 accepts: no f-string quote reused inside its fields
        if line.strip().startswith("print(f\""):
            assert line.count('"') == 2, line


def test_requote_strings_leaves_what_it_cannot_requote():
    assert requote_strings('x != "cpu" and "it\'s"', '"') == "x != 'cpu' and \"it's\""
    assert requote_strings("plain", '"') == "plain"


def test_capability_unpacking_gets_no_fix_even_unsafe(tmp_path):
    text, findings, _r = _fix(tmp_path, """
        import torch


        def caps():
            major, minor = torch.cuda.get_device_capability()
            return major
        """, unsafe=True)
    assert [f.fix for f in findings if f.code == "DEV009"] == [None]
    assert "torch.npu.get_device_capability" not in text


@pytest.mark.parametrize("target", ["npu", "agnostic"])
def test_device_properties_whose_major_is_read_get_no_fix(tmp_path, target):
    text, findings, _r = _fix(tmp_path, """
        import torch


        def flash_ok():
            props = torch.cuda.get_device_properties(0)
            return props.major >= 8
        """, target=target, unsafe=True)
    assert [f.fix for f in findings if f.code == "DEV009"] == [None]
    assert "get_device_properties(0)" in text and "torch.cuda.get_device_properties" in text


def test_device_properties_used_for_memory_are_still_fixed(tmp_path):
    text, _f, _r = _fix(tmp_path, """
        import torch


        def memory():
            return torch.cuda.get_device_properties(0).total_memory
        """)
    assert "torch.npu.get_device_properties(0).total_memory" in text


def test_an_npu_device_string_never_keeps_a_cuda_index_call(tmp_path):
    text, _f, _r = _fix(tmp_path, """
        import torch


        def move(x):
            return x.to(f"cuda:{torch.cuda.current_device()}")
        """, select=["DEV002"])
    assert 'x.to(f"npu:{torch.npu.current_device()}")' in text


def test_agnostic_bf16_test_is_fixed(tmp_path):
    text, findings, remaining = _fix(tmp_path, """
        import torch


        def pick():
            use_bf16 = torch.cuda.is_bf16_supported()
            gated = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
            return use_bf16, gated
        """, target="agnostic")
    assert 'use_bf16 = (DEVICE_TYPE != "cpu" and torch.get_device_module(DEVICE_TYPE).is_bf16_supported())' in text
    assert 'gated = DEVICE_TYPE != "cpu" and torch.get_device_module(DEVICE_TYPE).is_bf16_supported()' in text
    assert "torch.cuda" not in text and not remaining
    ast.parse(text)


MIGRATES = {
    "helpers.py": """
        import torch


        def sync(x):
            torch.cuda.synchronize()
            return x.cuda()


        CAPABLE = ["cuda", "xpu"]
        """,
}


def test_a_scan_of_the_migrated_copy_does_not_flag_what_fix_wrote(tmp_path):
    from tests.cli_util import run_cli
    import json

    src = tmp_path / "src"
    src.mkdir()
    for rel, code in MIGRATES.items():
        (src / rel).write_text(textwrap.dedent(code).lstrip("\n"), encoding="utf-8")
    out = tmp_path / "out"
    r = run_cli("fix", ".", "--out-dir", str(out), "--no-cache", cwd=str(src))
    assert r.code == 0, r.err
    text = (out / "helpers.py").read_text()
    assert 'CAPABLE = ["cuda", "npu", "xpu"]' in text and "import torch_npu" not in text
    again = json.loads(run_cli("scan", ".", "--no-cache", "--format", "json", "--fail-on", "never", cwd=str(out)).out)["findings"]
    assert again == []  # no DEV024 on the kept "cuda" entry, no IMP002 where autoload needs no import
    old = json.loads(run_cli("scan", ".", "--no-cache", "--format", "json", "--fail-on", "never", "--torch-npu", "2.1.0",
                             cwd=str(out)).out)["findings"]
    assert [(f["code"], f["line"], f["severity"]) for f in old] == [("IMP002", 5, "warning")]  # torch.npu without torch_npu


def test_agnostic_prelude_in_a_notebook_lands_in_the_first_cell_importing_torch(tmp_path):
    import json

    cells = ["try:\n    import wandb\nexcept ImportError:\n    wandb = None\nimport os\n",
             "import numpy as np\nimport torch\n",
             "x = torch.ones(2).cuda()\n",
             "import torch.nn as nn\nm = nn.Linear(2, 2).to('cuda')\n"]
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c} for c in cells]}
    p = tmp_path / "explore.ipynb"
    p.write_text(json.dumps(nb), encoding="utf-8")
    s = Settings(target="agnostic").validate()
    src = read_source(str(p))
    findings = analyze_source(src, "explore.ipynb", s)
    from ascendify.fix.run import fix_source
    from ascendify.scan.source import encode_source

    text, _a, _r, _u, error = fix_source(src, findings, s, "explore.ipynb")
    assert error is None
    out = json.loads(encode_source(src, text).decode("utf-8"))
    sources = ["".join(c["source"]) for c in out["cells"]]
    assert "DEVICE_TYPE = " in sources[1] and all("DEVICE_TYPE = " not in c for i, c in enumerate(sources) if i != 1)
    assert "x = torch.ones(2).to(DEVICE_TYPE)" in sources[2]
    ns: dict = {}
    for c in sources[1:]:  # the cells run in order without a NameError (wandb's cell aside)
        exec(compile(c, "cell", "exec"), ns)


def test_notebook_findings_use_cell_and_line_everywhere(tmp_path):
    import csv
    import io
    import json

    from tests.cli_util import run_cli

    cells = ["import torch\n", "def f(x):\n    if torch.cuda.is_available():\n        torch.cuda.synchronize()\n        return torch.nn.DataParallel(x)\n"]
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": c.splitlines(True)} for c in cells]}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb, indent=1), encoding="utf-8")
    raw_lines = (tmp_path / "nb.ipynb").read_text().split("\n")
    found = json.loads(run_cli("scan", ".", "--no-cache", "--format", "json", "--fail-on", "never", cwd=str(tmp_path)).out)["findings"]
    sync = next(f for f in found if f["code"] == "DEV008")
    assert (sync["cell"], sync["cell_line"]) == (2, 3)
    assert [(n["kind"], n["cell"], n["line"]) for n in sync["notes"]] == [("dead", 2, 2)]
    assert "under the CUDA-only test at cell 2, line 2" in sync["notes"][0]["text"]
    guard = next(f for f in found if f["code"] == "DEV007")
    assert [(n["kind"], n["cell"], n["line"]) for n in guard["notes"]] == [("held", 2, 4)]
    assert "(DST005 at cell 2, line 4)" in guard["notes"][0]["text"]
    rows = list(csv.DictReader(io.StringIO(run_cli("scan", ".", "--no-cache", "--format", "csv", "--fail-on", "never", cwd=str(tmp_path)).out)))
    row = next(r for r in rows if r["code"] == "DEV008")
    assert (row["cell"], row["start_line"], row["severity"]) == ("2", "3", "info")
    assert "under the CUDA-only test at cell 2, line 2" in row["message"]  # the message and its notes, one line
    sarif = json.loads(run_cli("scan", ".", "--no-cache", "--format", "sarif", "--fail-on", "never", cwd=str(tmp_path)).out)
    res = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "DEV008")
    at = res["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert "torch.cuda.synchronize()" in raw_lines[at - 1]  # the annotation lands on that code in the .ipynb
    assert (res["properties"]["cell"], res["properties"]["cellLine"]) == (2, 3)
    assert "under the CUDA-only test at cell 2, line 2" in res["message"]["text"]
