"""Python 3.9–3.13 support, checked on the source of every module.

``make test-compat`` runs this on Python 3.9 and 3.13, where torch is not
installed: the modules that import torch (probe, export, compare) are never
imported there, so their source is compiled and inspected instead.
"""

from __future__ import annotations

import ast
import os
import sys
import warnings

import pytest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "ascendify")
MODULES = sorted(
    os.path.relpath(os.path.join(d, f), SRC)
    for d, _, files in os.walk(SRC)
    for f in files
    if f.endswith(".py")
)

# Names that exist only from the given Python on (module, attribute): not to be
# used at all, or only behind ``try``/``except ImportError`` or a ``sys.version_info``
# test (tomllib → tomli).
NEWER_STDLIB = {
    ("itertools", "pairwise"): "3.10", ("datetime", "UTC"): "3.11", ("enum", "StrEnum"): "3.11",
    ("hashlib", "file_digest"): "3.11", ("contextlib", "chdir"): "3.11", ("typing", "Self"): "3.11",
    ("typing", "ParamSpec"): "3.10", ("typing", "TypeAlias"): "3.10", ("typing", "TypeGuard"): "3.10",
    ("typing", "Never"): "3.11", ("typing", "LiteralString"): "3.11", ("typing", "assert_never"): "3.11",
    ("typing", "override"): "3.12", ("itertools", "batched"): "3.12", ("builtins", "ExceptionGroup"): "3.11",
    ("builtins", "aiter"): "3.10", ("builtins", "anext"): "3.10",
}
NEWER_KEYWORDS = {("zip", "strict"): "3.10", ("dataclass", "slots"): "3.10", ("dataclass", "kw_only"): "3.10"}


def _tree(rel: str) -> ast.Module:
    with open(os.path.join(SRC, rel), encoding="utf-8") as fh:
        return ast.parse(fh.read(), rel)


def test_modules_found():
    assert "scan/engine.py" in MODULES and "probe/recorder.py" in MODULES and len(MODULES) > 50


@pytest.mark.parametrize("rel", MODULES)
def test_compiles_on_this_python(rel):
    """Syntax (``match``, ``except*``, PEP 695) that this Python cannot compile, also in torch-only modules."""
    with open(os.path.join(SRC, rel), "rb") as fh:
        data = fh.read()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)  # invalid escapes: an error on a future Python
        compile(data, rel, "exec", dont_inherit=True)


@pytest.mark.parametrize("rel", MODULES)
def test_no_api_newer_than_python_3_9(rel):
    tree = _tree(rel)
    future = any(isinstance(n, ast.ImportFrom) and n.module == "__future__" and any(a.name == "annotations" for a in n.names) for n in tree.body)
    # behind `try: ... except ImportError` or `if sys.version_info >= (3, 11):`
    guarded = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try) or (isinstance(t, ast.If) and "version_info" in ast.unparse(t.test))
               for b in t.body for n in ast.walk(b)}
    problems = []
    for node in ast.walk(tree):
        # X | Y in an annotation is evaluated at run time without the __future__ import
        anns = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            anns = [x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x is not None and x.annotation is not None]
            anns += [node.returns] if node.returns else []
        elif isinstance(node, ast.AnnAssign):
            anns = [node.annotation]
        if not future and any(isinstance(s, ast.BinOp) and isinstance(s.op, ast.BitOr) for an in anns for s in ast.walk(an)):
            problems.append(f"{node.lineno}: `X | Y` annotation without `from __future__ import annotations`")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2 \
                and isinstance(node.args[1], ast.BinOp) and isinstance(node.args[1].op, ast.BitOr):
            problems.append(f"{node.lineno}: isinstance(x, A | B) needs Python 3.10")
        if isinstance(node, ast.Call):
            fname = node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else ""
            for kw in node.keywords:
                if (fname, kw.arg) in NEWER_KEYWORDS:
                    problems.append(f"{node.lineno}: {fname}({kw.arg}=) needs Python {NEWER_KEYWORDS[fname, kw.arg]}")
            # importlib.resources Traversable.joinpath(a, b) takes several parts only from 3.11 (zip, namespace packages)
            if fname == "joinpath" and len(node.args) > 1 and "resources" in ast.unparse(node.func):
                problems.append(f"{node.lineno}: resources ... .joinpath(a, b) needs Python 3.11; chain .joinpath(a).joinpath(b)")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (node.value.id, node.attr) in NEWER_STDLIB:
            problems.append(f"{node.lineno}: {node.value.id}.{node.attr} needs Python {NEWER_STDLIB[node.value.id, node.attr]}")
        if isinstance(node, ast.Name) and ("builtins", node.id) in NEWER_STDLIB and isinstance(node.ctx, ast.Load):
            problems.append(f"{node.lineno}: {node.id} needs Python {NEWER_STDLIB['builtins', node.id]}")
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in guarded:
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if "tomllib" in mods:
                problems.append(f"{node.lineno}: `import tomllib` without the tomli fallback (Python 3.11+)")
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if (node.module, a.name) in NEWER_STDLIB:
                        problems.append(f"{node.lineno}: from {node.module} import {a.name} needs Python {NEWER_STDLIB[node.module, a.name]}")
        if sys.version_info >= (3, 10) and isinstance(node, getattr(ast, "Match", ())):
            problems.append(f"{node.lineno}: `match` needs Python 3.10")
    assert not problems, f"{rel}:\n" + "\n".join(problems)


def test_checker_finds_what_it_looks_for(tmp_path, monkeypatch):
    """The checker itself: each pattern above is reported on a planted module."""
    planted = (
        "import tomllib\nimport itertools\nfrom typing import Self\n"
        "def f(x: int | None): return zip([1], [2], strict=True)\n"
        "isinstance(1, int | str)\nitertools.pairwise([1, 2])\n"
        "from importlib import resources\nresources.files('p').joinpath('a', 'b')\n"
    )
    (tmp_path / "bad.py").write_text(planted)
    monkeypatch.setattr(sys.modules[__name__], "SRC", str(tmp_path))
    with pytest.raises(AssertionError) as err:
        test_no_api_newer_than_python_3_9("bad.py")
    text = str(err.value)
    for needle in ("1: `import tomllib`", "3: from typing import Self", "4: `X | Y` annotation", "4: zip(strict=)",
                   "5: isinstance(x, A | B)", "6: itertools.pairwise", "8: resources ... .joinpath(a, b)"):
        assert needle in text, needle
