"""Patterns seen in public training scripts, written anew: whole-file scans and fixes with every
rule on, where the interplay of rules (not one rule's fixture) decides the outcome."""

from __future__ import annotations

import ast

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import read_source


def _scan(tmp_path, text: str, target: str = "npu"):
    p = tmp_path / "train.py"
    p.write_text(text)
    s = Settings(select=["ALL"], target=target).validate()
    src = read_source(str(p))
    return src, s, analyze_source(src, "train.py", s)


def _codes(findings) -> list:
    return sorted((f.line, f.code) for f in findings if not f.code.startswith("OPS"))


DISPATCH = '''import torch


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()
    elif device.type == "npu":
        torch.npu.synchronize()


class Prefetcher:
    def __init__(self, device):
        self.is_cuda = device.type == "cuda" and torch.cuda.is_available()
        self.is_npu = device.type == "npu" and torch.npu.is_available()

    def stream(self):
        if self.is_cuda:
            return torch.cuda.Stream()
        elif self.is_npu:
            return torch.npu.Stream()
        return None
'''


def test_code_that_already_dispatches_to_npu_is_left_alone(tmp_path):
    """No DEV023/DEV007/DEV008/DEV012/DEV015 on the CUDA branches, and no IMP002 asking for an
    unconditional `import torch_npu` (which would break the file on CUDA machines)."""
    _src, _s, findings = _scan(tmp_path, DISPATCH)
    assert _codes(findings) == []


NANOGPT_LIKE = '''import torch

device = "cuda"
device_type = "cuda" if "cuda" in device else "cpu"
ctx = torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)
'''


def test_agnostic_safe_fixes_keep_a_device_choice_consistent(tmp_path):
    """nanoGPT's `"cuda" if "cuda" in device else "cpu"` once `device` became DEVICE_TYPE: the safe
    fixes change the test and its branch together (the test accepts the NPU beside CUDA), so AMP is
    not silently off on an Ascend host, and the test gives what it gave on CPU and CUDA."""
    src, s, findings = _scan(tmp_path, NANOGPT_LIKE, target="agnostic")
    text, *_rest, error = fix_source(src, findings, s, "train.py")
    assert error is None
    assert 'device_type = DEVICE_TYPE if ("cuda" in device or "npu" in device) else "cpu"' in text
    assert 'device = DEVICE_TYPE' in text
    ast.parse(text)


def test_capability_gate_is_not_renamed_by_safe_fixes(tmp_path):
    """`torch.npu.get_device_capability()` returns None: a safe rename would turn a CUDA-only
    flash-attention gate into a TypeError."""
    code = "import torch\n\nuse_flash = torch.cuda.get_device_capability()[0] >= 8\n"
    src, s, findings = _scan(tmp_path, code)
    # not even an unsafe rename: the result is indexed and compared, which raises on None
    assert [(f.code, f.fix) for f in findings if f.code == "DEV009"] == [("DEV009", None)]
    text, *_rest, error = fix_source(src, findings, s, "train.py")
    assert error is None and "torch.cuda.get_device_capability()" in text


def test_init_process_group_in_if_else_branches_is_not_a_second_call(tmp_path):
    code = '''import torch.distributed as dist


def setup(use_file, path):
    if use_file:
        dist.init_process_group(backend="gloo", init_method=f"file://{path}")
    else:
        dist.init_process_group(backend="hccl")
'''
    _src, _s, findings = _scan(tmp_path, code)
    msgs = [f.message for f in findings if f.code == "DST004"]
    assert len(msgs) == 2 and not any("calls it again" in m for m in msgs)
