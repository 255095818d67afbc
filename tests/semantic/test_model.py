"""Unit cases for the semantic model: device values of expressions and the truth of guards on Ascend."""

from __future__ import annotations

import ast

import pytest

from ascendify.config import Settings
from ascendify.scan.engine import RuleContext, _walk
from ascendify.scan.source import SourceFile

PRELUDE = """import os
import argparse
import torch
import torch.distributed as dist
from transformers.utils import is_torch_npu_available

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", type=int, default=0)
args = parser.parse_args()


class T:
    def __init__(self):
        self.gpu = int(os.environ["LOCAL_RANK"])
        self.use_cuda = torch.cuda.is_available()

    def m(self, x):
        return PROBE


def helper(local_rank):
    return local_rank % torch.cuda.device_count()


def f(rank, x, c, d):
    use_cuda = torch.cuda.is_available()
    use_gpu = d.type != "cpu"
    dev = helper(rank)
    return PROBE
"""


def _model(expr: str, where: str = "f"):
    """The model of PRELUDE with ``expr`` as the return value of function ``where`` ("f" or the method "m")."""
    head, sep, tail = PRELUDE.partition("    def m(self, x):\n        return PROBE")
    text = head + sep.replace("PROBE", expr if where == "m" else "None") + tail
    text = text.replace("    return PROBE\n", f"    return {expr if where == 'f' else 'None'}\n")
    tree = ast.parse(text)
    src = SourceFile(path="t.py", text=text, raw=text.encode())
    ctx = RuleContext(tree, src, "t.py", Settings().validate(), {})
    _walk(tree, {}, ctx, {})
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == where)
    node = next(n for n in ast.walk(fn) if isinstance(n, ast.Return)).value
    return ctx.model, node


@pytest.mark.parametrize("expr,kinds", [
    ('"cuda:1"', {("cuda", "literal")}),
    ('f"cuda:{rank}"', {("cuda", "literal")}),
    ('"cuda:%d" % rank', {("cuda", "literal")}),
    ('torch.device("cuda", rank)', {("cuda", "literal")}),
    ('"npu:0"', {("npu", "literal")}),
    ('"mps"', {("other", "mps")}),
    ('int(os.environ["LOCAL_RANK"])', {("index", "env")}),
    ('dist.get_rank()', {("index", "rank")}),
    ('rank % torch.cuda.device_count()', {("index", "modulo")}),
    ('dev', {("index", "modulo")}),  # returned by a helper
    ('x.device', {("tensor", "")}),
    ('"cuda" if c else "cpu"', {("cuda", "literal"), ("cpu", "literal")}),
    ('args.gpu', {("index", "argparse")}),
    ('torch.accelerator.current_accelerator()', {("accel", "")}),
    ('torch.cuda.current_device()', {("index", "current_device")}),
    ('rank', {("index", "name")}),  # only the name says so
])
def test_device_values(expr, kinds):
    model, node = _model(expr)
    assert set(model.device_of(node)) == kinds


def test_self_attribute_value():
    model, node = _model("self.gpu", where="m")
    assert set(model.device_of(node)) == {("index", "env")}


@pytest.mark.parametrize("expr,value,kind", [
    ("torch.cuda.is_available()", False, "cuda"),
    ("not torch.cuda.is_available()", True, "cuda"),
    ('d.type == "cuda"', False, "cuda"),
    ('"cuda" in str(d)', False, "cuda"),
    ('d.type != "cpu"', True, "cpu"),
    ("use_gpu", True, "cpu"),
    ("use_cuda", False, "cuda"),
    ("torch.cuda.device_count() > 1", False, "cuda"),
    ("torch.xpu.is_available()", False, "other"),
    ("torch.backends.mps.is_available()", False, "other"),
    ("is_torch_npu_available()", True, "npu"),
    ('hasattr(torch, "npu")', True, "npu"),
    ("torch.accelerator.is_available()", True, "accel"),
    ("c and torch.cuda.is_available()", False, "cuda"),
    ("c", None, None),
])
def test_guard_truth_on_ascend(expr, value, kind):
    model, node = _model(expr)
    t = model.truth(node)
    assert (t.value, t.kind) == (value, kind)


def test_stored_flag_truth():
    model, node = _model("self.use_cuda", where="m")
    t = model.truth(node)
    assert (t.value, t.kind) == (False, "cuda")


CONTEXT_SRC = """import torch

try:
    import apex
except ImportError:
    apex = None


def f(x):
    if torch.cuda.is_available():
        a = x.cuda()
    else:
        b = x
    try:
        c = torch.get_autocast_dtype("cuda")
    except AttributeError:
        c = torch.get_autocast_gpu_dtype()
    d = torch.accelerator.current_accelerator() if hasattr(torch, "accelerator") else torch.cuda.current_device()
    return a, b, c, d
"""


def _context_of(src_text: str, name: str, which: int = 0):
    tree = ast.parse(src_text)
    ctx = RuleContext(tree, SourceFile(path="c.py", text=src_text, raw=src_text.encode()), "c.py", Settings().validate(), {})
    _walk(tree, {}, ctx, {})
    targets = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
    return ctx.model.context(targets[which].value)


def test_context_flags():
    dead = _context_of(CONTEXT_SRC, "a")
    assert dead.dead and isinstance(dead.dead_origin, ast.Call) and not dead.cpu_fallback
    fallback = _context_of(CONTEXT_SRC, "b")
    assert fallback.cpu_fallback and not fallback.dead
    assert not _context_of(CONTEXT_SRC, "c", 0).compat and _context_of(CONTEXT_SRC, "c", 1).compat
    assert _context_of(CONTEXT_SRC, "apex").compat  # `apex = None` in `except ImportError`
    tree = ast.parse(CONTEXT_SRC)
    ctx = RuleContext(tree, SourceFile(path="c.py", text=CONTEXT_SRC, raw=CONTEXT_SRC.encode()), "c.py", Settings().validate(), {})
    _walk(tree, {}, ctx, {})
    imp = next(n for n in ast.walk(tree) if isinstance(n, ast.Import) and n.names[0].name == "apex")
    assert ctx.model.context(imp).import_guarded
    ifexp = next(n for n in ast.walk(tree) if isinstance(n, ast.IfExp))
    assert ctx.model.context(ifexp.orelse).compat and not ctx.model.context(ifexp.body).compat
