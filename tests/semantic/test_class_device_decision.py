"""A class that decides its device in one method and reads the decision in another (denoising-diffusion-
pytorch's ``Attend``, found in review): ``__init__`` returns early unless ``torch.cuda.is_available()``,
then reads CUDA device properties (no automatic fix, so that test is left as written) and sets
``self.cuda_config``; ``flash_attn`` picks ``self.cuda_config if q.is_cuda else self.cpu_config``.  The
npu copy rewrote ``q.is_cuda`` to ``q.is_npu`` alone: NPU tensors took the config that stayed None and
``config._asdict()`` raised.  The class's device tests stay as written together; a class without a held
test still gets its fix."""

from __future__ import annotations

import textwrap

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import SourceFile

ATTEND = '''
import torch
from collections import namedtuple

Config = namedtuple("Config", ["enable_flash"])


class Attend(torch.nn.Module):
    def __init__(self, flash=False):
        super().__init__()
        self.cpu_config = Config(True)
        self.cuda_config = None
        if not torch.cuda.is_available() or not flash:
            return
        props = torch.cuda.get_device_properties(torch.device("cuda"))
        self.cuda_config = Config(props.major >= 8)

    def forward(self, q):
        is_cuda = q.is_cuda
        config = self.cuda_config if is_cuda else self.cpu_config
        return config._asdict()
'''

PLAIN = '''
import torch


class Mover(torch.nn.Module):
    def forward(self, q):
        if q.is_cuda:
            return q.float()
        return q
'''


def fixed(text: str, target: str = "npu") -> tuple:
    s = Settings(target=target).validate()
    src = SourceFile(path="t.py", text=textwrap.dedent(text).lstrip("\n"))
    findings = analyze_source(src, "t.py", s)
    out, _applied, _rem, _unsafe, error = fix_source(src, findings, s, "t.py")
    assert error is None, error
    return out, findings


def test_is_cuda_reading_a_decision_held_in_init_stays():
    out, findings = fixed(ATTEND)
    assert "is_cuda = q.is_cuda" in out and "is_npu" not in out
    assert "not torch.cuda.is_available()" in out
    f = next(f for f in findings if f.line == 18)
    assert f.fix is None and any(n.kind == "held" and n.line == 12 for n in f.notes), (f, f.notes)


def test_a_class_without_a_held_test_is_fixed():
    out, _ = fixed(PLAIN)
    assert "if q.is_npu:" in out
