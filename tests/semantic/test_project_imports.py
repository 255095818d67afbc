"""The project pass resolves imports as Python does (issue 20): several projects under one scan root
resolve independently, and `--format json` says why a call reaches the helper's file."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from tests.cli_util import run_cli

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILIES = os.path.join(HERE, "families")


def _scan(cwd, target="."):
    r = run_cli("scan", target, "--format", "json", "--fail-on", "never", "--no-cache", "-j", "1", cwd=str(cwd))
    assert r.code == 0, r.err
    return json.loads(r.out)["findings"]


def _dev026(findings, prefix=""):
    return sorted((f["path"][len(prefix):], f["line"]) for f in findings if f["code"] == "DEV026" and f["path"].startswith(prefix))


@pytest.fixture()
def mono(tmp_path):
    dst = tmp_path / "mono"
    shutil.copytree(os.path.join(FAMILIES, "monorepo_imports"), dst)
    return dst


def test_whole_scan_finds_what_each_project_alone_finds(mono):
    whole = _scan(mono)
    for project in ("imagenet", "word_lm", "mnist", "tools"):
        alone = _scan(mono / project) if project != "tools" else None
        if alone is not None:
            assert _dev026(alone) == _dev026(whole, project + "/"), project
    assert _dev026(whole, "imagenet/") == [("main.py", 6)]
    assert _dev026(whole, "word_lm/") == []  # its own utils.py does no CUDA work (imagenet's does)
    assert _dev026(whole, "mnist/") == []


def test_related_says_how_the_import_resolved(mono):
    by = {(f["path"], f["line"]): f for f in _scan(mono) if f["code"] == "DEV026"}
    why = by[("imagenet/main.py", 6)]["related"][-1]
    assert why["kind"] == "import" and (why["path"], why["line"]) == ("imagenet/utils.py", 5)
    assert why["message"] == ("`utils.init_distributed_mode` resolves to the function `init_distributed_mode` in imagenet/utils.py; "
                              "`utils` is imagenet/utils.py: the script's own folder (sys.path[0])")
    assert "`sys.path.insert` at line 5 of tools/train.py" in by[("tools/train.py", 14)]["related"][-1]["message"]
    assert "a src/ layout" in by[("tools/train.py", 16)]["related"][-1]["message"]


def test_a_package_init_that_re_exports(tmp_path):
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("from .train_utils import setup\n", encoding="utf-8")
    (tmp_path / "utils" / "train_utils.py").write_text(
        "import torch.distributed as dist\n\n\ndef setup():\n    dist.init_process_group('nccl')\n", encoding="utf-8")
    (tmp_path / "train.py").write_text("from utils import setup\n\nsetup()\n", encoding="utf-8")
    found = [f for f in _scan(tmp_path) if f["code"] == "DEV026"]
    assert [(f["path"], f["line"]) for f in found] == [("train.py", 3)]
    assert "utils/__init__.py re-exports it" in found[0]["related"][-1]["message"]


def test_classes_and_extensions_say_what_they_resolve_to():
    by = {(f["path"], f["line"]): f for f in _scan(os.path.join(FAMILIES, "cross_module_classes")) if f["code"] == "DEV026"}
    why = by[("main.py", 18)]["related"][-1]["message"]
    assert why.startswith("`timer` resolves to the method `CudaTimer.__call__` in utils.py (the class of the instance")
    assert by[("main.py", 22)]["related"][0]["message"].startswith("DEV012")  # Prefetcher() runs its base's __init__
    ext = {(f["path"], f["line"]): f for f in _scan(os.path.join(FAMILIES, "project_extensions")) if f["code"] == "DEV026"}
    nms = ext[("train.py", 8)]
    assert "runs CUDA code the project builds" in nms["message"] and "Ascend C / torch_npu replacement" in nms["message"]
    assert (nms["related"][0]["path"], nms["related"][0]["line"]) == ("setup.py", 6)
    assert ("train.py", 10) not in ext  # fused_act_safe picks its fallback on an Ascend host


def test_a_callers_guard_around_a_helper_into_project_cuda_code_is_held():
    """`if x.is_cuda: fused_act(x) else: F.leaky_relu(...)` in the caller: the project pass takes DEV015's
    fix back (x.is_npu would send NPU tensors into the CUDA kernel) and says why."""
    by = {(f["path"], f["line"], f["code"]): f for f in _scan(os.path.join(FAMILIES, "project_extensions"))}
    guard = by[("infer.py", 11, "DEV015")]
    assert guard["fix"] is None and guard["severity"] == "warning"
    assert [n["kind"] for n in guard["notes"]] == ["intent"] and "`fused_act()`" in guard["notes"][0]["text"]
    call = by[("infer.py", 12, "DEV026")]
    assert call["severity"] == "info" and call["notes"][0]["kind"] == "intent"
