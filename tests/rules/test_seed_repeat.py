"""``torch.manual_seed`` seeds every device, the NPU included (torch/random.py: ``_seed_custom_device``),
so ``torch.cuda.manual_seed_all(seed)`` right after it in the same block only repeats it on Ascend: info,
not a silent downgrade (the field trial's second scan said "the NPU generators stay unseeded" of code the
run showed seeded; the bundled example planted the same wrong claim as a DEV026).  Alone, it is silent."""

from __future__ import annotations

import textwrap

from ascendify.config import Settings
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import SourceFile


def dev011(body: str) -> list:
    s = Settings(select=["DEV011"]).validate()
    src = SourceFile(path="t.py", text="import torch\n" + textwrap.dedent(body).lstrip("\n"))
    return [(f.line, f.severity, f.fix is not None) for f in analyze_source(src, "t.py", s)]


def test_after_torch_manual_seed_it_is_info():
    assert dev011("""
        def seed_everything(seed):
            torch.manual_seed(seed)
            torch.cuda.manual_seed_all(seed)
    """) == [(4, "info", True)]


def test_alone_or_before_it_is_silent():
    assert dev011("""
        def seed_a(seed):
            torch.cuda.manual_seed_all(seed)

        def seed_b(seed):
            torch.cuda.manual_seed(seed)
            torch.manual_seed(seed)
    """) == [(3, "silent", True), (6, "silent", True)]


def test_the_seed_in_another_branch_does_not_count():
    assert dev011("""
        def seed(seed, cpu):
            if cpu:
                torch.manual_seed(seed)
            else:
                torch.cuda.manual_seed_all(seed)
    """) == [(6, "silent", True)]
