"""migrate's hook: [tool.ascendify.fit] → an ascendify fit run in a child process."""

from __future__ import annotations

import os
import textwrap

import pytest

pytest.importorskip("torch")

from ascendify.fit.hook import fit_args, fit_config, fit_rows, project_fit  # noqa: E402

MODEL = textwrap.dedent("""
    import torch.nn as nn

    def small():
        return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
""")


def project(tmp_path, fit_table: str, top: str = "") -> str:
    (tmp_path / "mymodels.py").write_text(MODEL)
    (tmp_path / "pyproject.toml").write_text(f"[tool.ascendify]\n{top}\n[tool.ascendify.fit]\n{fit_table}\n")
    return str(tmp_path)


def test_no_config_no_table(tmp_path):
    assert fit_config(str(tmp_path)) is None
    (tmp_path / "pyproject.toml").write_text("[tool.ascendify]\nchip = 'Ascend910B3'\n")
    assert project_fit(str(tmp_path)) is None


def test_config_to_arguments(tmp_path):
    root = project(tmp_path, 'factory = "mymodels:small"\ninputs = ["x:4,8"]\namp = "bf16"\ncards = 2\nshard = "zero1"',
                   top='chip = "Ascend910B3"')
    cfg = fit_config(root)
    assert cfg["chip"] == "Ascend910B3"
    assert fit_args(cfg) == ["mymodels:small", "--input", "x:4,8", "--chip", "Ascend910B3", "--amp", "bf16",
                             "--shard", "zero1", "--cards", "2", "--format", "json"]


def test_project_fit_runs_in_a_child(tmp_path):
    root = project(tmp_path, 'factory = "mymodels:small"\ninputs = ["x:4,8"]')
    r = project_fit(root)
    assert "error" not in r, r
    assert r["split"]["parameters"] == (8 * 16 + 16 + 16 * 4 + 4) * 4
    assert r["command"] == "fit" and r["command_line"].startswith("ascendify fit mymodels:small")
    assert [row["lever"] for row in fit_rows(r)][0] == "baseline"


def test_project_fit_errors_are_one_line(tmp_path):
    root = project(tmp_path, 'factory = "mymodels:missing"\ninputs = ["x:4,8"]')
    r = project_fit(root)
    assert "has no attribute 'missing'" in r["error"] and "\n" not in r["error"]
    root2 = project(tmp_path, 'factory = "mymodels:small"\ninput = ["x:4,8"]')
    assert "unknown key [tool.ascendify.fit] input" in project_fit(root2)["error"]
