"""Package layering (issue 19): the package-level imports among the scan core's packages form no
circle.  Computed with ``ast`` over ``src/ascendify`` (every ``import`` and ``from ... import``,
also those inside functions; imports under ``if TYPE_CHECKING:`` are annotations, not dependencies).

A "package" is the first name under ``ascendify``: ``ascendify.scan.engine`` is ``scan``,
``ascendify.config`` is ``config``."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ascendify"
CORE = frozenset({"scan", "semantic", "rules", "fix", "diagnostics", "output", "config", "options", "kb"})
GROUND = ("diagnostics",)
"""Imports nothing from the rest of the package."""


def _type_checking(test: ast.AST) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, package: str):
    """(module, line) of each import in ``tree`` (``package``: the importing module's package, for
    relative imports), outside ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.If) and _type_checking(n.test):
            stack.extend(n.orelse)
            continue
        if isinstance(n, ast.Import):
            for a in n.names:
                yield a.name, n.lineno
        elif isinstance(n, ast.ImportFrom):
            if n.level:
                base = package.split(".")
                base = base[: len(base) - (n.level - 1)]
                mod = ".".join(base + ([n.module] if n.module else []))
                names = [mod] if n.module else [f"{mod}.{a.name}" for a in n.names]
            else:
                mod = n.module or ""
                names = [mod] + ([f"{mod}.{a.name}" for a in n.names] if mod == "ascendify" else [])
            for m in names:
                yield m, n.lineno
        stack.extend(ast.iter_child_nodes(n))


def package_imports(root: Path = SRC) -> dict:
    """package → {imported package: [(file, line), ...]} over every module under ``root``."""
    out: dict = defaultdict(lambda: defaultdict(list))
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if len(parts) < 2:
            continue  # ascendify/__init__.py
        src = parts[1]
        package = ".".join(parts if path.name == "__init__.py" else parts[:-1])
        for mod, line in _imports(ast.parse(path.read_text(encoding="utf-8")), package):
            bits = mod.split(".")
            if bits[0] == "ascendify" and len(bits) > 1 and bits[1] != src:
                out[src][bits[1]].append((str(path.relative_to(root.parent)), line))
    return out


def cycles(graph: dict, among: frozenset) -> list:
    """Each edge a -> b (both in ``among``) that lies on a circle of edges within ``among``."""
    g = {a: {b for b in graph.get(a, ()) if b in among} for a in among}

    def reaches(a: str, goal: str) -> bool:
        seen, todo = set(), [a]
        while todo:
            x = todo.pop()
            if x == goal:
                return True
            if x not in seen:
                seen.add(x)
                todo.extend(g[x])
        return False

    return sorted((a, b) for a in g for b in g[a] if reaches(b, a))


def test_the_detector_finds_a_circle(tmp_path):
    pkg = tmp_path / "ascendify"
    for name, text in {"__init__.py": "", "a/__init__.py": "", "a/x.py": "from ascendify.b import y\n",
                       "b/__init__.py": "", "b/y.py": "def f():\n    from ..a import x\n",
                       "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ascendify.a import x\n",
                       "d.py": "import ascendify.c\n"}.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text, encoding="utf-8")
    g = package_imports(pkg)
    assert {k: sorted(v) for k, v in g.items()} == {"a": ["b"], "b": ["a"], "d": ["c"]}  # c's import is for annotations
    assert cycles(g, frozenset({"a", "b", "c", "d"})) == [("a", "b"), ("b", "a")]


def test_no_circle_among_the_core_packages():
    g = package_imports()
    found = cycles(g, CORE)
    assert found == [], "\n".join(f"{a} -> {b}: {g[a][b][:3]}" for a, b in found)


def test_the_ground_floor_and_the_model_import_down_only():
    g = package_imports()
    assert {p: sorted(g.get(p, ())) for p in GROUND} == {"diagnostics": []}
    assert sorted(set(g["semantic"]) & CORE) == ["diagnostics"]  # the model: no scan, rules or fix
    assert not set(g["config"]) & {"scan", "rules", "fix", "options", "output"}
    assert not set(g["output"]) & {"scan", "rules", "fix", "options"}
    assert "options" not in g["kb"] and "fix" not in g["scan"]
    assert "doctor" not in g["target"]  # the target release reads versions from the KB, not from the doctor


_CODE = re.compile(r"\b(?:%s)\d{3}\b" % "|".join(("SYN", "DEV", "IMP", "DST", "AMP", "DTY", "OPS", "DYN", "MEM", "EXT", "CMP", "DEP")))


def rule_code_literals(root: Path) -> list:
    """(file, line, text) of each string literal in the modules under ``root`` that names a rule code
    (``"DEV026"``, ``f"... DST001 ..."``); docstrings and comments may name them (they explain)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        docs |= {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}  # attribute docstrings
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs and _CODE.search(n.value):
                out.append((path.name, n.lineno, n.value[:60]))
    return out


def test_the_detector_finds_a_rule_code_literal(tmp_path):
    (tmp_path / "m.py").write_text('"""DEV026 is explained here."""\nX = 1\n"""an attribute\'s doc: DST001"""\n'
                                   'def f(c):\n    # DEV006 in a comment\n    return c == "DEV026" or f"{c}: EXT017 at"\n', encoding="utf-8")
    (tmp_path / "ok.py").write_text('CODE = "DEVICE1"\nY = "DEV0261"\n', encoding="utf-8")
    assert rule_code_literals(tmp_path) == [("m.py", 6, "DEV026"), ("m.py", 6, ": EXT017 at")]


def test_the_model_names_no_rule_code():
    """The semantic layer computes facts; which rule a fact makes a finding of is said in rules/ (the
    project checks, the rules' data: ``work``, ``builds_cuda``), never by a code in semantic/."""
    assert rule_code_literals(SRC / "semantic") == []
