"""Property tests: on random programs built from CUDA-isms in varied contexts and
layouts, `fix` output re-parses, is idempotent, and touches only flagged lines."""

from __future__ import annotations

import ast
import difflib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import SourceFile

HEADERS = [
    "import torch\n",
    "import os\nimport torch\nimport torch.nn as nn\n",
    '"""Doc."""\nfrom __future__ import annotations\nimport torch as t\ntorch = t\n',
    "import torch\nimport torch.distributed as dist\nfrom torch.cuda.amp import autocast, GradScaler\n",
]
STATEMENTS = [
    "x = torch.ones(2).cuda()",
    "m = torch.nn.Linear(2, 2).cuda(non_blocking=True)  # keep",
    'dev = torch.device("cuda")',
    'dev = torch.device("cuda:0")',
    'y = torch.zeros(3, device="cuda")',
    'z = x.to("cuda")',
    "torch.cuda.synchronize()",
    "n = torch.cuda.device_count()",
    'ok = torch.cuda.is_available()',
    'if torch.cuda.is_available():\n    pass',
    'state = torch.load("ckpt.pt")',
    'dist.init_process_group(backend="nccl")',
    "scaler = GradScaler()",
    "with autocast():\n    pass",
    'os.environ["CUDA_VISIBLE_DEVICES"] = "0"',
    "torch.backends.cudnn.benchmark = True",
    "q = (x\n     .cuda())",
    "w = [t.cuda() for t in (x, x)]",
    "flag = x.is_cuda",
    'name = "not a device: cuda"',
    "empty = ()",
    "pair = (x)",
]
WRAPPERS = [
    lambda body: body,
    lambda body: "def f(x):\n" + _indent(body) + "\n    return x",
    lambda body: "class C:\n    def forward(self, x):\n" + _indent(_indent(body)),
    lambda body: "for _ in range(2):\n" + _indent(body),
    lambda body: "try:\n" + _indent(body) + "\nexcept Exception:  # comment\n    pass",
]


def _indent(text: str) -> str:
    return "\n".join("    " + ln if ln else ln for ln in text.split("\n"))


@st.composite
def programs(draw):
    header = draw(st.sampled_from(HEADERS))
    stmts = draw(st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=6))
    body = "\n".join(stmts)
    if "x" in body:
        body = "x = torch.ones(2)\n" + body
    if "os." in body and "import os" not in header:
        header += "import os\n"
    if "dist." in body and "dist" not in header:
        header += "import torch.distributed as dist\n"
    if ("GradScaler" in body or "autocast" in body) and "autocast" not in header:
        header += "from torch.cuda.amp import autocast, GradScaler\n"
    wrap = draw(st.sampled_from(WRAPPERS))
    text = header + "\n" + wrap(body) + "\n"
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return text.replace("\n", newline)


def _fix(text: str, target: str) -> str:
    s = Settings(target=target, unsafe_fixes=True).validate()
    src = SourceFile("p.py", text, newline="\r\n" if "\r\n" in text else "\n")
    findings = analyze_source(src, "p.py", s)
    new, _applied, _remaining, _unsafe, error = fix_source(src, findings, s, "p.py")
    assert error is None, error
    return new, findings


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.sampled_from(["npu", "agnostic"]))
def test_fix_reparses_is_idempotent_and_local(text, target):
    ast.parse(text)
    new, findings = _fix(text, target)
    ast.parse(new)
    again, _ = _fix(new, target)
    assert again == new
    if "\r\n" in text:
        assert "\n" not in new.replace("\r\n", "")  # line endings kept
    # only lines that carry a finding or one of its fix's edits change (inserted lines aside)
    flagged = set()
    for f in findings:
        flagged.update(range(f.line, f.end_line + 1))
        for e in (f.fix.edits if f.fix else ()):
            if e.start[0]:
                flagged.update(range(e.start[0], e.end[0] + 1))
    old_lines = text.splitlines()
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, old_lines, new.splitlines(), autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            assert set(range(i1 + 1, i2 + 1)) <= flagged, (text, new)


import glob
import os

import pytest

CASES = sorted(p for p in glob.glob(os.path.join(os.path.dirname(__file__), "rules", "cases", "*.py"))
               if p.count(".") == 1)  # CODE.py and CODE_ok.py, not the golden CODE.npu.py files


@pytest.mark.parametrize("target", ["npu", "agnostic"])
@pytest.mark.parametrize("path", CASES, ids=[os.path.basename(p) for p in CASES])
def test_every_fixture_fixes_cleanly_with_all_rules(path, target):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    new, _ = _fix(text, target)
    ast.parse(new)
    again, _ = _fix(new, target)
    assert again == new
