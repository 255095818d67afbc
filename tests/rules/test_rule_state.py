"""Rule modules keep per-file state only through the typed store ``ctx.state(Kind)`` (issue 19):
no ``ctx.__dict__`` keys, no ad hoc attributes set on the context, no ``getattr(ctx, "_private")``."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from ascendify.scan.context import FileContext

RULES = Path(__file__).resolve().parents[2] / "src" / "ascendify" / "rules"
_CTX_NAMES = {"ctx", "c", "context"}


def _is_ctx(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in _CTX_NAMES


def ad_hoc_state(text: str) -> list:
    """(line, what) for each place ``text`` keeps state on a context outside ``ctx.state``."""
    out = []
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, ast.Attribute) and n.attr == "__dict__" and _is_ctx(n.value):
            out.append((n.lineno, "ctx.__dict__"))
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)) and _is_ctx(n.value):
            out.append((n.lineno, f"ctx.{n.attr} ="))
        elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("getattr", "setattr", "hasattr", "delattr")
              and n.args and _is_ctx(n.args[0]) and len(n.args) > 1 and isinstance(n.args[1], ast.Constant)
              and str(n.args[1].value).startswith("_")):
            out.append((n.lineno, f"{n.func.id}(ctx, {n.args[1].value!r})"))
    return out


def test_the_detector_sees_each_form():
    bad = (
        'def f(ctx):\n'
        '    ctx.__dict__.setdefault("_x", []).append(1)\n'
        '    ctx._y = 2\n'
        '    return getattr(ctx, "_z", None)\n'
    )
    assert sorted(ad_hoc_state(bad)) == [(2, "ctx.__dict__"), (3, "ctx._y ="), (4, "getattr(ctx, '_z')")]
    good = (
        'def f(ctx):\n'
        '    ctx.state(K).items.append(1)\n'
        '    ctx.current_code\n'
        '    getattr(ctx, "bindings", None)\n'
        '    x = models.__dict__["resnet"]\n'
    )
    assert ad_hoc_state(good) == []


def test_no_rule_module_keeps_ad_hoc_context_state():
    files = sorted(RULES.rglob("*.py"))
    assert len(files) > 10
    found = [f"{p.relative_to(RULES)}:{line}: {what}" for p in files for line, what in ad_hoc_state(p.read_text(encoding="utf-8"))]
    assert found == []


@dataclass
class _Seen:
    nodes: list = field(default_factory=list)


@dataclass
class _Memo:
    names: set


def test_state_is_one_typed_instance_per_file_and_kind():
    a = FileContext(ast.parse("import torch\ndef f(): pass\n"), "import torch\ndef f(): pass\n")
    b = FileContext(ast.parse("x = 1\n"), "x = 1\n")
    assert a.peek_state(_Seen) is None
    a.state(_Seen).nodes.append(1)
    a.state(_Seen).nodes.append(2)
    assert a.peek_state(_Seen).nodes == [1, 2]
    assert b.peek_state(_Seen) is None and b.state(_Seen).nodes == []
    calls = []

    def make(ctx):
        calls.append(ctx)
        return _Memo(set(ctx.aliases))

    assert a.state(_Memo, make).names == {"torch"}
    assert a.state(_Memo, make).names == {"torch"}
    assert calls == [a]  # built once per file
    assert isinstance(a.state(_Memo, make), _Memo) and a.peek_state(_Seen) is not a.peek_state(_Memo)
