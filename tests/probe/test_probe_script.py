"""Script mode: npu emulation on the CPU, step / time bounds, hccl → gloo, the bundled example."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from ascendify.cli import cli
from ascendify.probe.run import probe_script

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "scripts")
ROOT = os.path.dirname(os.path.dirname(HERE))


def test_training_script_stops_after_max_steps():
    res = probe_script(os.path.join(SCRIPTS, "train_npu.py"), ["--epochs", "50"], torch_npu="2.7.1.post11",
                       max_steps=2, max_seconds=60)
    em = res["emulation"]
    assert res["error"] is None
    assert em["stopped"].startswith("max-steps") and em["optimizer_steps"] == 2
    used = " | ".join(em["used"])
    for what in ("device npu → cpu", "Tensor.npu() → no-op", "torch.npu.amp.autocast", "torch.npu.amp.GradScaler"):
        assert what in used
    ops = {r["op"] for r in res["classification"]["rows"]}
    assert {"addmm", "relu", "_log_softmax"} <= ops
    assert "step 0" in res["stdout_tail"] and "step 1" not in res["stdout_tail"]  # stopped right after the 2nd step


def test_hccl_becomes_gloo_and_fallback_is_found():
    res = probe_script(os.path.join(SCRIPTS, "dist_npu.py"), [], torch_npu="2.7.1.post11", max_steps=3)
    assert res["error"] is None, res["error"]
    assert any("hccl" in u and "gloo" in u for u in res["emulation"]["used"])
    assert "world 1 3.0 1.5" in res["stdout_tail"]
    fb = [f for f in res["classification"]["findings"] if f["kind"] == "cpu_fallback"]
    assert fb and fb[0]["op"] == "linalg_inv_ex" and fb[0]["lines"][0].endswith("dist_npu.py:9")


def test_custom_npu_op_not_emulated_is_reported():
    res = probe_script(os.path.join(SCRIPTS, "custom_op.py"), [], torch_npu="2.7.1.post11")
    assert res["error"]["type"] == "NotImplementedError" and "npu_silu" in res["error"]["message"]
    assert res["error"]["line"].endswith("custom_op.py:5")
    assert "torch_npu.npu_silu (not emulated)" in res["emulation"]["used"]
    dep = [f for f in res["classification"]["findings"] if f["kind"] == "deprecated"]
    assert dep and "torch.nn.functional.silu" in dep[0]["message"] and dep[0]["lines"][0].endswith("custom_op.py:5")


def test_max_seconds_bounds_a_loop():
    res = probe_script(os.path.join(SCRIPTS, "forever.py"), [], torch_npu="2.7.1.post11", max_seconds=1.5)
    assert res["emulation"]["stopped"].startswith("max-seconds")
    rows = {r["op"]: r for r in res["classification"]["rows"]}
    # the script loops forever: only the 1.5 s budget stops it (30 s leaves room for a loaded machine)
    assert rows["add.Tensor"]["count"] > 10 and res["seconds"] < 30


def test_cli_script_mode_passes_args():
    r = CliRunner().invoke(cli, ["probe", "--run", os.path.join(SCRIPTS, "train_npu.py"), "--max-steps", "1",
                                 "--torch-npu", "2.7.1.post11", "--", "--epochs", "3"])
    assert r.exit_code == 0, r.output
    assert "stopped: max-steps (1 optimizer steps)" in r.output
    assert r.output.strip().splitlines()[-1].startswith("VERDICT: ready on torch_npu 2.7.1.post11")


@pytest.mark.slow
def test_bundled_example_after_fix_runs_a_few_steps(tmp_path):
    src = os.path.join(ROOT, "examples", "cuda_project")
    if not os.path.isdir(src):
        pytest.skip("bundled example not present")
    dst = tmp_path / "proj"
    shutil.copytree(src, dst)
    exe = [sys.executable, "-m", "ascendify"]
    fix = subprocess.run(exe + ["fix", str(dst), "--target", "npu", "--write", "-j", "1", "--no-cache"],
                         capture_output=True, text=True)
    assert fix.returncode in (0, 1), fix.stderr
    res = probe_script(str(dst / "train.py"), ["--steps", "5", "--workers", "0", "--output-dir", str(tmp_path / "out")],
                       torch_npu="2.7.1.post11", max_steps=2, max_seconds=120)
    assert res["error"] is None, res["error"]
    assert res["emulation"]["optimizer_steps"] == 2
    assert "device npu → cpu" in res["emulation"]["used"]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").glob("*.pt"))  # torch.save redirected


def test_probe_writes_nothing_into_the_users_tree(tmp_path):
    proj = tmp_path / "proj"
    (proj / "pkg").mkdir(parents=True)
    (proj / "pkg" / "__init__.py").write_text("")
    (proj / "pkg" / "net.py").write_text("import torch\n\ndef build():\n    return torch.nn.Linear(4, 2)\n")
    (proj / "run.py").write_text("import torch\nfrom pkg.net import build\nm = build().to('npu')\n"
                                 "opt = torch.optim.SGD(m.parameters(), 0.1)\n"
                                 "for _ in range(5):\n    m(torch.randn(3, 4, device='npu')).sum().backward()\n"
                                 "    opt.step()\n    torch.save(m.state_dict(), 'ckpt.pt')\n")
    before = sorted(p.relative_to(proj).as_posix() for p in proj.rglob("*"))
    res = probe_script(str(proj / "run.py"), [], torch_npu="2.7.1.post11", max_steps=2)
    assert res["error"] is None, res["error"]
    cwd = os.getcwd()
    os.chdir(proj)
    try:
        from ascendify.probe.run import probe_model
        probe_model("pkg.net:build", ["x:3,4"], [], torch_npu="2.7.1.post11")
    finally:
        os.chdir(cwd)
    after = sorted(p.relative_to(proj).as_posix() for p in proj.rglob("*"))
    assert after == before
    assert not os.path.exists("ckpt.pt")  # torch.save went to a temporary folder
