"""A CUDA guard whose branch holds a test of its own that is never true on Ascend (an NCCL comparison)
is fixed safely: left unfixed, that inner test keeps its branch off exactly as before, so it does not
hold the guard back (pytorch/examples imagenet main.py:118, `ngpus_per_node` stayed 1 on an 8-NPU
host: field trial, issue 23)."""

from __future__ import annotations

import textwrap

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import read_source

COUNT = """\
import torch


def cards(dev, opts):
    if dev.type == "cuda":
        n = torch.accelerator.device_count()
        if n == 1 and opts.backend == "nccl":
            print("a single card")
    else:
        n = 1
    return n
"""


def _safe_fix(tmp_path, code: str, target: str = "npu") -> tuple:
    p = tmp_path / "cards.py"
    p.write_text(textwrap.dedent(code), encoding="utf-8")
    s = Settings(target=target).validate()
    src = read_source(str(p))
    found = analyze_source(src, "cards.py", s)
    return fix_source(src, found, s, "cards.py")[0], found


def test_guard_with_a_never_true_inner_test_is_fixed_safely(tmp_path):
    for target, test in (("npu", 'dev.type == "npu"'), ("agnostic", 'dev.type in ("cuda", "npu")')):
        text, found = _safe_fix(tmp_path, COUNT, target)
        guard = next(f for f in found if f.line == 5)
        assert guard.fix is not None and guard.fix.safe, (target, guard)
        assert f"    if {test}:" in text
        # the NCCL comparison stays reported and as written (it has no automatic fix of its own here)
        assert 'opts.backend == "nccl"' in text
        assert [f.code for f in found if f.line == 7] == ["DST002"]


def test_guard_with_an_always_true_inner_test_is_still_held(tmp_path):
    # `!= "nccl"` is true on Ascend: the inner branch would run once the guard is fixed, so it changes
    # together with the guard and its unsafe fix keeps the guard's fix unsafe
    text, found = _safe_fix(tmp_path, COUNT.replace('opts.backend == "nccl"', 'opts.backend != "nccl"'))
    assert '    if dev.type == "cuda":' in text
    guard = next(f for f in found if f.line == 5)
    assert guard.fix is None or not guard.fix.safe
