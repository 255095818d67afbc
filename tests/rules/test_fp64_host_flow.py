"""DTY002 follows a float64 tensor made on the host: reported when it (or a value computed from it) can
reach the device as float64, quiet when every path casts it first (field trial, issue 23: the diffusion
schedules of denoising-diffusion-pytorch are built in float64 on the CPU and registered as float32)."""

from __future__ import annotations

import os
import textwrap

from tests.rules.helpers import findings_for


def _lines(tmp_path, code: str) -> list:
    p = os.path.join(str(tmp_path), "noise_table.py")
    with open(p, "w", encoding="utf-8") as fh:
        fh.write(textwrap.dedent(code))
    return sorted(f.line for f in findings_for(p, "DTY002"))


HEAD = """\
import math
import torch
import torch.nn.functional as F
from torch import nn


def warm_ramp(n):
    x = torch.linspace(0, n, n + 1, dtype=torch.float64) / n
    keep = torch.cos(x * math.pi / 2) ** 2
    return torch.clip(1 - keep[1:] / keep[:-1], 0, 0.99)


class Noiser(nn.Module):
    def __init__(self, n=8):
        super().__init__()
        pick = warm_ramp
        beta = pick(n)
        keep = torch.cumprod(1.0 - beta, dim=0)
        prev = F.pad(keep[:-1], (1, 0), value=1.0)
        steps, = beta.shape
        self.steps = int(steps)
"""


def test_cast_to_float32_before_it_is_registered_is_quiet(tmp_path):
    code = HEAD + """\
        put = lambda key, v: self.register_buffer(key, v.to(torch.float32))
        put("beta", beta)
        put("root_keep", torch.sqrt(keep))
        put("ratio", (beta * prev / (1.0 - keep)).clamp(min=1e-20))
"""
    assert _lines(tmp_path, code) == []


def test_registered_as_float64_is_reported(tmp_path):
    # the same table registered without the cast: module.to(device) then moves float64 to the NPU
    code = HEAD + """\
        put = lambda key, v: self.register_buffer(key, v)
        put("beta", beta)
"""
    assert _lines(tmp_path, code) == [8]


def test_a_computed_value_moved_to_the_device_is_reported(tmp_path):
    code = HEAD + """\
        self.register_buffer("beta", beta.float())
        self.ratio = (prev / keep).to("npu")
"""
    assert _lines(tmp_path, code) == [8]


def test_moved_directly_and_module_level_values_are_reported(tmp_path):
    code = """\
    import torch

    TABLE = torch.arange(0, 8, dtype=torch.float64)   # other modules may import it


    def half_steps(device):
        s = torch.linspace(0, 1, 5, dtype=torch.float64)
        return s.to(device)[::2]
    """
    assert _lines(tmp_path, code) == [3, 7]


def test_default_device_moved_keeps_the_report(tmp_path):
    code = """\
    import torch

    torch.set_default_device("npu")


    def ramp():
        r = torch.linspace(0, 1, 5, dtype=torch.float64)
        return float(r.sum())
    """
    assert _lines(tmp_path, code) == [7]
    # without the default device the same function keeps the float64 on the host
    assert _lines(tmp_path, code.replace('torch.set_default_device("npu")', "")) == []
