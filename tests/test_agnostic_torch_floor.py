"""``--target agnostic`` writes ``torch.accelerator`` code (torch 2.6 and later).  On a project that pins an
older torch (deit: ``torch==1.13.1``) the migrated modules raised AttributeError at import on CUDA, where
the original runs: 8 of 60 changes wrong in the second held-out review.  fix --out-dir / --write and migrate
refuse with one line that says what to do; the diff mode warns; --target npu and a torch 2.x pin go on."""

from __future__ import annotations

import pytest

from ascendify.target import agnostic_torch_conflict

from .cli_util import run_cli

CODE = "import torch\nx = torch.zeros(1).cuda()\n"


def _project(tmp_path, pin: str):
    (tmp_path / "requirements.txt").write_text(f"{pin}\ntimm==0.4.12\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(CODE, encoding="utf-8")


@pytest.mark.parametrize("pin, conflict", [("torch==1.13.1", True), ("torch>=1.7,<2.0", True), ("torch~=1.13.0", True),
                                           ("torch==2.7.1", False), ("torch>=1.7", False), ("torch", False)])
def test_which_pins_conflict(tmp_path, pin, conflict):
    _project(tmp_path, pin)
    got = agnostic_torch_conflict(str(tmp_path))
    assert bool(got) is conflict, got
    if conflict:
        assert "requirements.txt asks for torch" in got and "--target npu" in got


def test_fix_out_dir_refuses_and_writes_nothing(tmp_path):
    src = tmp_path / "p"
    src.mkdir()
    _project(src, "torch==1.13.1")
    out = tmp_path / "out"
    r = run_cli("fix", str(src), "--target", "agnostic", "--out-dir", str(out), "--no-cache", cwd=str(tmp_path))
    assert r.code == 2 and not out.exists(), (r.code, r.err)
    assert r.err.count("\n") == 1 and "torch.accelerator" in r.err and "Traceback" not in r.err


def test_migrate_refuses(tmp_path):
    src = tmp_path / "p"
    src.mkdir()
    _project(src, "torch==1.13.1")
    r = run_cli("migrate", str(src), "--target", "agnostic", "--out-dir", str(tmp_path / "m"), "--no-doctor", cwd=str(tmp_path))
    assert r.code == 2 and "torch.accelerator" in r.err and not (tmp_path / "m").exists()


def test_diff_warns_and_npu_target_goes_on(tmp_path):
    _project(tmp_path, "torch==1.13.1")
    r = run_cli("fix", ".", "--target", "agnostic", "--no-cache", cwd=str(tmp_path))
    assert "warning:" in r.err and "torch.accelerator" in r.err and "DEVICE_TYPE" in r.out
    r = run_cli("fix", ".", "--target", "npu", "--out-dir", str(tmp_path.parent / (tmp_path.name + "-npu")), "--no-cache", cwd=str(tmp_path))
    assert r.code in (0, 1) and "torch.accelerator" not in r.err, r.err
