"""An int-typed argparse option whose default is None (``--gpu``, default None: "use the current
device", as pytorch/examples' imagenet and moco-v3 write it) is an ordinal *or None*.

``.cuda(args.gpu)`` with None is the current device; the agnostic copy must not write
``f"{DEVICE_TYPE}:{args.gpu}"`` (``"cuda:None"`` raises: moco-v3 main_lincls.py's criterion, found in
review) but ``torch.device(DEVICE_TYPE, args.gpu)``, which is the current device for None.  An int
device passed as ``.to(args.gpu)`` is a no-op for None, so naming its type is not a safe fix.
"""

from __future__ import annotations

import textwrap

import pytest

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import SourceFile

HEAD = """
import argparse
import torch
import torch.nn as nn
parser = argparse.ArgumentParser()
parser.add_argument('--gpu', default={default}, type=int)
args = parser.parse_args()
"""


def fixed(body: str, target: str, default: str = "None", unsafe: bool = False, select=("DEV001", "DEV006")) -> str:
    text = textwrap.dedent(HEAD.format(default=default)).lstrip("\n") + textwrap.dedent(body)
    s = Settings(select=list(select), target=target, unsafe_fixes=unsafe).validate()
    src = SourceFile(path="t.py", text=text)
    findings = analyze_source(src, "t.py", s)
    out, _applied, _rem, _unsafe, error = fix_source(src, findings, s, "t.py")
    assert error is None, error
    return out


def test_cuda_of_an_option_that_may_be_none_becomes_torch_device_in_the_agnostic_copy():
    out = fixed("criterion = nn.CrossEntropyLoss().cuda(args.gpu)\n", "agnostic")
    assert "criterion = nn.CrossEntropyLoss().to(torch.device(DEVICE_TYPE, args.gpu))" in out
    assert '"{DEVICE_TYPE}:{args.gpu}"' not in out


def test_cuda_of_an_option_with_an_int_default_keeps_the_f_string():
    out = fixed("criterion = nn.CrossEntropyLoss().cuda(args.gpu)\n", "agnostic", default="0")
    assert 'criterion = nn.CrossEntropyLoss().to(f"{DEVICE_TYPE}:{args.gpu}")' in out


def test_npu_target_keeps_the_index_as_the_original_did():
    out = fixed("criterion = nn.CrossEntropyLoss().cuda(args.gpu)\n", "npu")
    assert "criterion = nn.CrossEntropyLoss().npu(args.gpu)" in out


def test_to_an_option_that_may_be_none_is_not_fixed_safely():
    body = "x = torch.zeros(1).to(args.gpu)\n"
    assert "x = torch.zeros(1).to(args.gpu)" in fixed(body, "npu")  # .to(None) stays where it is
    assert "x = torch.zeros(1).to(args.gpu)" in fixed(body, "agnostic")
    assert 'x = torch.zeros(1).to(f"npu:{args.gpu}")' in fixed(body, "npu", unsafe=True)
    assert 'x = torch.zeros(1).to(f"npu:{args.gpu}")' in fixed(body, "npu", default="0")


def test_torch_device_with_none_is_the_current_device_as_cuda_none_is():
    """The fact the agnostic rewrite rests on (checked on the CPU: the index None is no index)."""
    torch = pytest.importorskip("torch")
    assert torch.device("cpu", None) == torch.device("cpu")
    assert str(torch.device("cpu", None)) == "cpu"
