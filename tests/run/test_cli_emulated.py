"""``ascendify run`` end to end on the real emulator: the report says where a program fails and why,
what fell back to the CPU, that child processes and torchrun ranks are emulated too, and
``migrate --verify`` shows the run in the HTML report."""

from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "cuda_project")


def run(*args, cwd, timeout=240):
    env = dict(os.environ)
    env.pop("ASCENDIFY_RUN_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "ascendify", *args], cwd=str(cwd), capture_output=True, text=True,
                          timeout=timeout, env=env)


def write(path, text):
    path.write_text(text, encoding="utf-8")


def report_of(r, path):
    assert path.is_file(), r.stderr[-3000:]
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_example_fails_where_an_ascend_host_fails(tmp_path):
    rep = tmp_path / "run.json"
    r = run("run", "--report", str(rep), "--", "python", "train.py", "--steps", "2", "--workers", "0",
            "--output-dir", str(tmp_path / "out"), cwd=EXAMPLE)
    assert r.returncode == 1
    assert "AssertionError: Torch not compiled with CUDA enabled" in r.stderr  # the program's own traceback, untouched
    doc = report_of(r, rep)
    ff = doc["first_failure"]
    assert (ff["type"], ff["message"]) == ("AssertionError", "Torch not compiled with CUDA enabled")
    uf = ff["user_frame"]
    assert (uf["path"], uf["line"], uf["function"]) == ("trainer/engine.py", 57, "main")
    assert uf["code"].endswith(".to(device)")
    ex = ff["explained"]
    assert ex["kind"] == "cuda-absent" and ex["rules"] == ["DEV", "EXT"]
    # no finding on line 57: the earlier lines that set `device` (engine.py's torch.device("cuda", ...), and the
    # --device option's "cuda" default in config.py)
    assert [(f["code"], f["where"]) for f in ex["findings"]] == [("DEV003", "trainer/engine.py:45"),
                                                                 ("DEV024", "trainer/config.py:32")]
    assert ex["on_failing_line"] is False and ex["project_count"] > 10
    assert ex["fix_command"] == "ascendify fix . --select DEV003,DEV024"
    assert doc["parameters"]["on"] == "cpu" and doc["parameters"]["loud"] is False  # failed before training
    text = r.stderr.split("== ascendify run:")[1]
    assert "at trainer/engine.py:57 in main: model = build_model(" in text
    assert "called from train.py:14 in <module>" in text
    # the README shows this output: every line of its block is what run prints
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    block = readme.split("the original stops where a card stops:\n\n```\n", 1)[1].split("```", 1)[0]
    printed = text.splitlines()
    assert [ln for ln in block.splitlines() if ln not in printed] == []


@pytest.mark.parametrize("mode", ["auto", "python"])
def test_a_script_that_raises_names_its_frame_and_the_rule_on_that_line(tmp_path, mode):
    write(tmp_path / "model.py", "import torch\n\n\ndef make():\n    w = torch.ones(3)\n    return w.cuda()\n")
    write(tmp_path / "main.py", "from model import make\n\nprint('before')\nmake()\n")
    r = run("run", "--mode", mode, "--format", "json", "--", "python", "main.py", cwd=tmp_path)
    assert r.returncode == 1
    out, _, js = r.stdout.partition("{")
    assert out == "before\n"  # the program's stdout, then the JSON report
    doc = json.loads("{" + js)
    ff = doc["first_failure"]
    assert ff["user_frame"]["path"] == "model.py" and ff["user_frame"]["line"] == 6
    assert [(f["path"], f["line"]) for f in ff["traceback"] if not os.path.isabs(f["path"])] == [("main.py", 4), ("model.py", 6)]
    ex = ff["explained"]
    assert ex["on_failing_line"] is True
    assert [f["code"] for f in ex["findings"]] == ["DEV001"] and ex["findings"][0]["where"] == "model.py:6"
    assert ex["fix_command"] == "ascendify fix . --select DEV001"
    assert doc["emulated"]["mode"] == ("python" if mode == "python" else doc["emulated"]["mode"])


def test_a_cpu_fallback_is_reported_with_the_users_frame(tmp_path):
    write(tmp_path / "fb.py", "import torch\n\n\ndef invert(x):\n    return torch.linalg.inv(x)\n\n\n"
                              "x = torch.eye(3, device='npu') * 2\nprint(invert(x).sum().item())\n")
    r = run("run", "--torch-npu", "2.7.1", "--format", "json", "-o", str(tmp_path / "r.json"), "--", "python", "fb.py",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout == "1.5\n"
    assert "will fall back to run on the CPU" in r.stderr  # torch_npu's own warning text, printed by the emulator
    doc = report_of(r, tmp_path / "r.json")
    # the shim reaches the structured op's out= overload, as torch_npu's messages name it; python mode the op
    assert [(f["op"].split(".")[0], f["where"]) for f in doc["fallbacks"]] == [("aten::linalg_inv_ex", ["fb.py:5"])]
    assert doc["ops_by_class"].get("cpu_fallback") == 1


def test_every_python_child_process_is_emulated(tmp_path):
    write(tmp_path / "child.py", "import torch\nprint('child', torch.cuda.is_available(), torch.ones(1, device='npu:1').device)\n")
    write(tmp_path / "parent.py", "import subprocess, sys\nr = subprocess.run([sys.executable, 'child.py'])\n"
                                  "sys.exit(r.returncode)\n")
    r = run("run", "--devices", "2", "--report", str(tmp_path / "r.json"), "--", "python", "parent.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout == "child False npu:1\n"
    doc = report_of(r, tmp_path / "r.json")
    assert doc["processes_seen"] == 2
    child = [p for p in doc["ranks"] if p["argv"] and p["argv"][-1].endswith("child.py")]
    assert len(child) == 1 and child[0]["ops_by_class"]


DDP = """\
import os, sys
import torch
import torch.distributed as dist

dist.init_process_group("hccl")
rank = dist.get_rank()
torch.npu.set_device(rank)
t = torch.full((2,), float(rank + 1), device=f"npu:{rank}")
dist.all_reduce(t)
print(f"rank {rank} sum {t.tolist()}", flush=True)
dist.barrier()
if rank == 1:
    raise ValueError("rank 1 stops here")
dist.destroy_process_group()
"""


def test_torchrun_ranks_are_merged_with_the_first_failure(tmp_path):
    write(tmp_path / "ddp.py", DDP)
    rep = tmp_path / "r.json"
    r = run("run", "--report", str(rep), "--", "torchrun", "--standalone", "--nproc-per-node", "2", "ddp.py", cwd=tmp_path)
    assert r.returncode != 0
    # two processes share the pipe: their lines may run together, so find the records, not the lines
    assert sorted(re.findall(r"rank (\d) sum \[3\.0, 3\.0\]", r.stdout)) == ["0", "1"]
    doc = report_of(r, rep)
    assert doc["command_line"][:3] == [sys.executable, "-m", "torch.distributed.run"]
    ranks = [p["rank"] for p in doc["ranks"] if p["rank"] is not None]
    assert ranks == [0, 1]
    ff = doc["first_failure"]
    assert (ff["rank"], ff["type"], ff["message"]) == (1, "ValueError", "rank 1 stops here")
    assert ff["user_frame"]["path"] == "ddp.py" and ff["user_frame"]["line"] == 13
    assert "rank 0, rank 1" in r.stderr.split("== ascendify run:")[1]  # per-rank sections in the text too


def test_migrate_verify_shows_the_run_in_the_report(tmp_path):
    proj = tmp_path / "proj"
    shutil.copytree(EXAMPLE, proj)
    out = tmp_path / "mig"
    r = run("migrate", str(proj), "--out-dir", str(out), "--no-doctor", "--no-cache", "--fail-on", "never",
            "--verify", "python train.py --steps 2 --workers 0", "--format", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(r.stdout)  # the program's output went to stderr: stdout is the JSON alone
    v = doc["verify"]
    assert v["ok"] is True and v["exit_code"] == 0 and v["first_failure"] is None
    assert v["fallbacks"] == []
    assert v["parameters"]["on"] == "npu" and v["summary"] == "exit 0: runs, parameters on the NPU; 1 dtype finding(s)"
    assert "step     2/2" in r.stderr
    html = (out / "report" / "index.html").read_text(encoding="utf-8")
    assert "Verified by running: the copy runs" in html and "python train.py --steps 2 --workers 0" in html
    rep = json.loads((out / "report" / "report.json").read_text(encoding="utf-8"))
    assert rep["verify"]["exit_code"] == 0


CPU_ONLY = """\
import torch


def train(device):
    model = torch.nn.Linear(4, 2).to(device)
    loss = model(torch.ones(3, 4, device=device)).sum()
    loss.backward()
    return loss.item()


print(train("cuda" if torch.cuda.is_available() else "cpu"))  # the model is freed before exit
"""


def test_a_program_that_silently_trains_on_the_cpu_is_said_loudly(tmp_path):
    write(tmp_path / "t.py", CPU_ONLY)
    r = run("run", "--report", str(tmp_path / "r.json"), "--", "python", "t.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    p = report_of(r, tmp_path / "r.json")["parameters"]
    assert (p["on"], p["loud"]) == ("cpu", True)
    assert "!!! TRAINED ON THE CPU, NOT THE NPU" in r.stderr
