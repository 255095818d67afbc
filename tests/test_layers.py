"""Package layering (issue 19): the package-level imports among the scan core's packages form no
circle.  Computed with ``ast`` over ``src/ascendify`` (every ``import`` and ``from ... import``,
also those inside functions; imports under ``if TYPE_CHECKING:`` are annotations, not dependencies).

A "package" is the first name under ``ascendify``: ``ascendify.scan.engine`` is ``scan``,
``ascendify.config`` is ``config``."""

from __future__ import annotations

import ast
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
