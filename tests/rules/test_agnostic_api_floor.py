"""The agnostic target writes only torch.accelerator APIs that the project's torch has (found in review:
edm pins torch 2.6, and `torch.accelerator.reset_peak_memory_stats()` raised AttributeError at its first
progress report, on CUDA too), and never puts torch-npu into an agnostic copy's requirements (dinov2: a
hard torch-npu pin makes `import torch` raise on every CUDA and CPU host).

First releases, read from PyPI's torch wheels (torch/accelerator/__init__.py, memory.py):
device_index 2.8, reset_peak_memory_stats 2.9, get_memory_info 2.10.
"""

import os

import pytest

from ascendify.config import Settings
from ascendify.deps import audit as A
from ascendify.deps.parse import read_file
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import SourceFile

SOURCE = """\
import torch

torch.cuda.reset_peak_memory_stats()
free, total = torch.cuda.mem_get_info()
with torch.cuda.device(1):
    torch.cuda.synchronize()
"""


def _fixes(torch_npu: str) -> dict:
    s = Settings(target="agnostic", torch_npu=torch_npu, unsafe_fixes=True).validate()
    out = {}
    for f in analyze_source(SourceFile(path="t.py", text=SOURCE), "t.py", s):
        if f.code in ("DEV008", "DEV010"):
            texts = [e.text for e in f.fix.edits] if f.fix else []
            out[f.line] = next((t for t in texts if "accelerator" in t), None)
    return out


def test_apis_newer_than_a_torch_2_6_project_are_left_for_a_person():
    got = _fixes("2.6.0.post5")
    assert got[3] is None and got[4] is None and got[5] is None  # 2.9, 2.10, 2.8 APIs
    assert got[6] == "torch.accelerator.synchronize"  # in torch 2.6


@pytest.mark.parametrize("release,fixed", [("2.8.0", {5}), ("2.9.0", {3, 5}), ("2.10.0", {3, 4, 5})])
def test_each_api_is_written_from_its_first_release_on(release, fixed):
    got = _fixes(release)
    assert {line for line in (3, 4, 5) if got[line]} == fixed


def test_agnostic_target_reports_the_torch_npu_pin_without_writing_it(tmp_path):
    p = tmp_path / "requirements.txt"
    p.write_text("torch==2.6.0\n", encoding="utf-8")
    files = read_file(str(p), "requirements.txt")
    npu = [f for f in A.audit(files, Settings(target="npu").validate()) if f.code == "DEP004"]
    agn = [f for f in A.audit(files, Settings(target="agnostic").validate()) if f.code == "DEP004"]
    assert len(npu) == 1 and npu[0].fix is not None and npu[0].fix.safe
    assert len(agn) == 1 and agn[0].fix is None
    assert "Ascend hosts only" in agn[0].message and "Ascend hosts only" not in npu[0].message
