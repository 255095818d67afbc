"""semantic.instances: the class a called name holds, from its binding (issue 20, item 2)."""

from __future__ import annotations

import ast
import textwrap

from ascendify.scan.context import FileContext
from ascendify.semantic.bindings import dotted
from ascendify.semantic.instances import method_ref

SRC = """
import utils
from utils import MetricLogger

class Trainer:
    def __init__(self):
        self.logger = MetricLogger()
        self.other = make()

    def end(self):
        self.logger.synchronize()
        self.other.synchronize()

def main(flag, arg):
    scaler = utils.NativeScaler()
    scaler(1, 2)
    either = MetricLogger() if flag else None
    either.synchronize()
    two = MetricLogger()
    two = utils.NativeScaler()
    two.step()
    arg.synchronize()
    for item in []:
        item()
"""


def _refs():
    ctx = FileContext(ast.parse(textwrap.dedent(SRC)), SRC)

    def class_ref(fn):
        text = dotted(fn)
        return {"MetricLogger": "utils.MetricLogger", "utils.NativeScaler": "utils.NativeScaler"}.get(text or "")

    out = {}
    for n in ast.walk(ctx.tree):
        if isinstance(n, ast.Call):
            r = method_ref(n, ctx.bindings, class_ref)
            out[(n.lineno, ast.unparse(n.func) if hasattr(ast, "unparse") else n.lineno)] = r
    return out


def test_instances_known_from_their_binding():
    got = {k: v for k, v in _refs().items() if v is not None}
    assert sorted(got.values()) == ["utils.MetricLogger.synchronize", "utils.NativeScaler.__call__"]
    assert got[(11, "self.logger.synchronize")] == "utils.MetricLogger.synchronize"
    assert got[(16, "scaler")] == "utils.NativeScaler.__call__"


def test_unknown_or_ambiguous_instances_are_left_alone():
    got = _refs()
    assert got[(12, "self.other.synchronize")] is None  # make() is no project class
    assert got[(18, "either.synchronize")] is None  # not a plain constructor call
    assert got[(21, "two.step")] is None  # two classes
    assert got[(22, "arg.synchronize")] is None  # a parameter
    assert got[(24, "item")] is None  # a loop variable
