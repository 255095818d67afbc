"""A string that picks an implementation is not a device (stylegan2-ada-pytorch's ops, found in the
held-out review): ``def bias_act(x, ..., impl='cuda')``, ``assert impl in ['ref', 'cuda']``,
``if impl == 'cuda' and x.device.type == 'cuda' and _init(): return _bias_act_cuda(...)``.  Rewritten as a
device (``impl=DEVICE_TYPE``), the CPU copy failed the assert; ``impl == 'npu' and x.device.type == 'npu'``
sent NPU tensors into the CUDA plugin.  Left as written, an Ascend host takes the reference code as the
original does.  A device variable compared only with device types is still a device."""

from __future__ import annotations

import textwrap

import pytest

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import SourceFile
from ascendify.semantic.selectors import impl_selectors

OPS = '''
import torch


def _init():
    return False


def bias_act(x, b=None, impl='cuda'):
    assert impl in ['ref', 'cuda']
    if impl == 'cuda' and x.device.type == 'cuda' and _init():
        return x
    return x + (b if b is not None else 0)


def filter2d(x, impl='cuda'):
    return bias_act(x, impl=impl)
'''

DEVICE = '''
import torch


def pick(device='cuda'):
    assert device in ['cpu', 'cuda']
    if device == 'cuda':
        return torch.zeros(1, device=device)
    return torch.zeros(1)
'''


def fixed(text: str, target: str) -> str:
    s = Settings(target=target).validate()
    src = SourceFile(path="ops.py", text=textwrap.dedent(text).lstrip("\n"))
    out, _applied, _rem, _unsafe, error = fix_source(src, analyze_source(src, "ops.py", s), s, "ops.py")
    assert error is None, error
    return out


@pytest.mark.parametrize("target", ["npu", "agnostic"])
def test_impl_selector_is_left_as_written(target):
    text = textwrap.dedent(OPS).lstrip("\n")
    assert fixed(OPS, target) == text


def test_the_left_copy_still_runs_on_the_cpu():
    torch = pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(fixed(OPS, "agnostic"), "ops.py", "exec"), ns)
    assert ns["filter2d"](torch.ones(2)).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("target, want", [("npu", "device='npu'"), ("agnostic", "device=DEVICE_TYPE")])
def test_a_device_parameter_is_still_a_device(target, want):
    assert want in fixed(DEVICE, target)


def test_selectors_need_a_string_that_names_no_device():
    import ast
    assert impl_selectors(ast.parse(textwrap.dedent(OPS))) == frozenset({"impl"})
    assert impl_selectors(ast.parse(textwrap.dedent(DEVICE))) == frozenset()
    assert impl_selectors(ast.parse("if mode in ('cuda', 'cpu', 'auto'): pass")) == frozenset()
    assert impl_selectors(ast.parse("if backend == 'triton' or backend == 'cuda': pass")) == frozenset({"backend"})


def test_selectors_come_from_the_engines_one_walk(monkeypatch):
    """The engine's walk collects the comparisons and the policy step finds the selectors from them once,
    after the walk: no second walk of the module (the DEV023/DEV024 checks walked it again in every file
    with a "cuda" literal: ~0.19x ast.parse on the bench corpus)."""
    import ascendify.semantic.selectors as sel

    walked: list = []  # the selectors' own walk of a tree (the model's fallback for a tree the engine never walked)
    real = sel.impl_selectors
    monkeypatch.setattr(sel, "impl_selectors", lambda tree: (walked.append(type(tree).__name__), real(tree))[1])
    s = Settings().validate()
    src = SourceFile(path="ops.py", text=textwrap.dedent(OPS).lstrip("\n"))
    assert analyze_source(src, "ops.py", s) == []  # the selector's values and tests: no finding
    assert "Module" not in walked
    src = SourceFile(path="dev.py", text=textwrap.dedent(DEVICE).lstrip("\n"))
    assert {f.code for f in analyze_source(src, "dev.py", s)} >= {"DEV023", "DEV024"}  # a device is still one
    assert "Module" not in walked
