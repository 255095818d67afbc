"""nn.DataParallel on the emulated host: scan (DST005, error) and run agree (field trial, issue 23).

torch_npu's native-API list marks ``torch.nn.DataParallel`` and ``torch.nn.parallel.data_parallel``
supported=false (the source DST005 cites).  On torch's CPU wheel, which torch_npu runs on, DataParallel's
scatter/replicate/gather reach ``torch._C._scatter`` & co., which only a CUDA build has: the program
stops there, and the run's report names DST005 at the DataParallel line as the reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from ascendify.run import report

SPLIT = """\
import torch
from torch import nn

head = nn.Linear(6, 3).to("npu")
both = nn.DataParallel(head, device_ids=[0, 1])
out = both(torch.ones(4, 6, device="npu"))
print("rows", out.shape[0])
"""


def test_scatter_failure_is_classed_as_data_parallel():
    got = report.classify("AttributeError", "module 'torch._C' has no attribute '_scatter'")
    assert got["id"] == "data-parallel" and got["rules"] == ["DST005"]
    assert "not supported on Ascend" in got["why"]


def test_other_missing_attributes_are_not_data_parallel():
    got = report.classify("AttributeError", "module 'torch._C' has no attribute '_cuda_getDeviceCount'")
    assert got is None or got["id"] != "data-parallel"
    got = report.classify("AttributeError", "'Linear' object has no attribute 'scatter'")
    assert got is None or got["id"] != "data-parallel"


def test_run_stops_in_data_parallel_and_names_dst005(tmp_path):
    prog = tmp_path / "split.py"
    prog.write_text(textwrap.dedent(SPLIT), encoding="utf-8")
    rep = tmp_path / "r.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("ASCENDIFY_RUN_CONFIG", None)
    p = subprocess.run([sys.executable, "-m", "ascendify", "run", "--devices", "2", "--report", str(rep), "-o", os.devnull,
                        "--", sys.executable, "split.py"], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 1, p.stderr[-2000:]
    doc = json.loads(rep.read_text(encoding="utf-8"))
    ff = doc["first_failure"]
    assert ff["user_frame"]["line"] == 6
    ex = ff["explained"]
    assert ex["kind"] == "data-parallel"
    assert [(f["code"], f["where"]) for f in ex["findings"]] == [("DST005", "split.py:5")]
