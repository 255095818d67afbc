"""Python's import system over the scanned tree: which file an ``import`` names.

A module name used to be matched by path suffix across the whole scanned tree, so in a folder
holding several projects (pytorch/examples: many scripts, each with its own ``utils.py``) a
script's helpers resolved to nothing, or to another project's file.  Python resolves a script's
absolute imports along ``sys.path``: the script's own folder first (``sys.path[0]``), then what
the environment adds (the project root when it is run from there or installed, a ``src/`` layout),
and whatever the file puts there itself (``sys.path.insert(0, os.path.dirname(__file__) + "/..")``).
This module models that, as pure functions of the tree's file list (relative paths, ``/``-separated;
no file system access), so a whole-tree scan resolves each project as a scan of that project alone.

The search path of an importing file, in order:

1. the folders its own ``sys.path.insert(...)`` calls put first (literal strings, and joins on
   ``os.path.dirname(__file__)`` / ``Path(__file__).parent`` that :func:`path_entry` evaluates);
2. for a module inside a package (its folder has ``__init__.py``): the folder above the topmost
   package (walking up through ``__init__.py``), then its own folder; for a script: its own folder;
3. the folders its ``sys.path.append(...)`` calls add;
4. each folder above it up to the scan root, and a ``src/`` folder in each (a ``src/`` layout):
   where the project root is when the script runs from there or the project is installed.

Along that path a name is found as Python finds it: the first entry holding a regular package
(``name/__init__.py``) or a module (``name.py``) wins; folders without ``__init__.py`` are portions
of a namespace package, used when no entry has a regular one.  Relative imports go up from the
importing file's package by their level.
"""

from __future__ import annotations

import ast
import posixpath
from dataclasses import dataclass
from typing import Iterable, Optional


@dataclass(frozen=True)
class Resolution:
    """Where a module name leads: the file (``pkg/__init__.py`` for a package; "" for a namespace
    package, which has none) and why Python finds it there, in words for a reviewer."""

    module: str
    rel: str
    why: str


def norm(rel: str) -> str:
    """``rel`` with ``/`` separators and no ``./`` parts."""
    p = posixpath.normpath(rel.replace("\\", "/"))
    return "" if p == "." else p


def _dir(rel: str) -> str:
    return posixpath.dirname(rel)


def _join(d: str, name: str) -> str:
    return f"{d}/{name}" if d else name


def _parent(p: str) -> str:
    """The folder above ``p`` (a path relative to the scan root, which may climb above it)."""
    p = norm(p)
    if not p:
        return ".."
    if p == ".." or p.endswith("/.."):
        return p + "/.."
    return _dir(p)


class Tree:
    """The Python files of a scanned tree and the folders holding them."""

    def __init__(self, files: Iterable[str]):
        self.files = frozenset(norm(f) for f in files if f.endswith(".py"))
        dirs = {""}
        for f in self.files:
            d = _dir(f)
            while d and d not in dirs:
                dirs.add(d)
                d = _dir(d)
        self.dirs = frozenset(dirs)

    def is_package(self, d: str) -> bool:
        return _join(d, "__init__.py") in self.files


def package_root(tree: Tree, d: str) -> Optional[str]:
    """The folder above the topmost package holding folder ``d`` (walking up through
    ``__init__.py``), or None when ``d`` is no package."""
    if not tree.is_package(d):
        return None
    top = d
    while top and tree.is_package(_dir(top)) and _dir(top) != top:
        top = _dir(top)
    return _dir(top) if top else ""


def search_path(tree: Tree, importer: str, entries: Iterable = ()) -> list:
    """``[(folder, why), ...]``: the folders an absolute import in ``importer`` is looked up in,
    in Python's order (see the module docstring).  ``entries``: the file's own ``sys.path``
    changes, ``(where, folder)`` with ``where`` "front" (``insert``) or "back" (``append``) and
    ``folder`` relative to the scan root (:func:`path_entry` gives them)."""
    importer = norm(importer)
    d = _dir(importer)
    out: list = []
    seen: set = set()

    def add(folder: Optional[str], why: str) -> None:
        if folder is None or folder in seen or folder not in tree.dirs:
            return
        seen.add(folder)
        out.append((folder, why))

    entries = list(entries)
    for where, folder, line in _entries(entries):
        if where == "front":
            add(folder, f"`sys.path.insert` at line {line} of {importer}")
    root = package_root(tree, d)
    if root is not None:
        add(root, f"the folder above the package `{posixpath.basename(d) if d else d}` ({importer} is a module of it)")
        add(d, "the importing file's own folder (when it runs as a script)")
    else:
        add(d, "the script's own folder (sys.path[0])")
    for where, folder, line in _entries(entries):
        if where == "back":
            add(folder, f"`sys.path.append` at line {line} of {importer}")
    up = d
    while True:
        add(up, "a folder above the script (the project root when it runs from there or is installed)")
        add(_join(up, "src"), "a src/ layout")
        if not up or _dir(up) == up:
            break
        up = _dir(up)
    return out


def _entries(entries: list) -> list:
    out = []
    for e in entries:
        if len(e) >= 2:
            out.append((e[0], e[1], e[2] if len(e) > 2 else 0))
    return out


def find(tree: Tree, dotted: str, path: list) -> Optional[Resolution]:
    """The module ``dotted`` along ``path`` (``[(folder, why), ...]``), as Python's path finder
    finds it (a regular package or module in the first entry that has one; otherwise the
    namespace package of every entry's folder), or None when it is not in the tree."""
    parts = [p for p in dotted.split(".") if p]
    if not parts:
        return None
    entries = list(path)
    why = ""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        hit = None
        portions: list = []
        for folder, w in entries:
            base = _join(folder, part)
            if _join(base, "__init__.py") in tree.files:
                hit = (base, _join(base, "__init__.py"), w)
                break
            if base + ".py" in tree.files:
                hit = (None, base + ".py", w)
                break
            if base in tree.dirs:
                portions.append((base, w))
        if i == 0:
            why = hit[2] if hit else (portions[0][1] if portions else "")
        if hit is None:
            if not portions:
                return None
            if last:
                return Resolution(dotted, "", f"a namespace package ({', '.join(p for p, _w in portions)}/): {why}")
            entries = [(p, w) for p, w in portions]
            continue
        pkg_dir, rel, _w = hit
        if last:
            return Resolution(dotted, rel, why)
        if pkg_dir is None:
            return None  # a plain module has no submodules
        entries = [(pkg_dir, why)]
    return None


def resolve(tree: Tree, importer: str, module: str, level: int = 0, entries: Iterable = ()) -> Optional[Resolution]:
    """The file ``importer``'s ``import module`` (``level`` dots: ``from ..pkg import x`` is
    ``("pkg", 2)``) names, or None (a library, or not in the scanned tree)."""
    importer = norm(importer)
    if level:
        base = _dir(importer)
        for _ in range(level - 1):
            if not base:
                return None  # beyond the top of the tree
            base = _dir(base)
        shown = "." * level + module
        if not module:
            init = _join(base, "__init__.py")
            if init in tree.files:
                return Resolution(shown, init, f"relative to {importer}")
            return None
        got = find(tree, module, [(base, f"relative to {importer}")])
        return Resolution(shown, got.rel, got.why) if got is not None else None
    return find(tree, module, search_path(tree, importer, entries))


class Resolver:
    """:func:`resolve` memoised per search path (files of one folder share it), for one scan."""

    def __init__(self, files: Iterable[str], entries: Optional[dict] = None):
        self.tree = Tree(files)
        self.entries = {norm(k): v for k, v in (entries or {}).items() if v}
        self._paths: dict = {}
        self._found: dict = {}

    def resolve(self, importer: str, module: str, level: int = 0) -> Optional[Resolution]:
        importer = norm(importer)
        if level:
            key = ("rel", _dir(importer), module, level)
            if key not in self._found:
                self._found[key] = resolve(self.tree, importer, module, level)
            return self._found[key]
        ents = self.entries.get(importer)
        pkey = (_dir(importer), repr(ents)) if ents else _dir(importer)
        path = self._paths.get(pkey)
        if path is None:
            path = self._paths[pkey] = search_path(self.tree, importer, ents or ())
        key = (pkey, module)
        if key not in self._found:
            self._found[key] = find(self.tree, module, path)
        return self._found[key]


# ---------------------------------------------------------------------- sys.path changes in a file
def path_entry(node: ast.Call, importer: str, lookup=None) -> Optional[tuple]:
    """``(where, folder)`` for ``sys.path.insert(i, X)`` / ``sys.path.append(X)`` whose ``X`` can be
    evaluated without running the file: string literals (relative to the importing file's folder:
    scripts are run from there), ``os.path.dirname(__file__)``, ``os.path.abspath``/``realpath``/
    ``normpath``, ``os.path.join``, ``+ "/.."``, ``Path(__file__).parent`` / ``.parents[k]`` /
    ``.resolve()`` and ``/``; ``folder`` is relative to the scan root.  ``lookup(name_node)`` gives
    the value a name holds there (``ROOT = Path(__file__).resolve().parents[1]`` then
    ``sys.path.append(str(ROOT))``), or None.  None otherwise (a folder outside the tree, an
    environment variable, a computed value)."""
    f = node.func
    if not (isinstance(f, ast.Attribute) and f.attr in ("insert", "append") and _dotted(f.value) == "sys.path"):
        return None
    if f.attr == "insert":
        if len(node.args) != 2:
            return None
        where = "front" if isinstance(node.args[0], ast.Constant) and node.args[0].value == 0 else "back"
        value = node.args[1]
    else:
        if len(node.args) != 1:
            return None
        where, value = "back", node.args[0]
    d = _dir(norm(importer))
    got = _eval_path(value, d, 0, lookup)
    if got is None:
        return None
    p = norm(got)
    if p == ".." or p.startswith("../"):
        return None  # above the scanned tree
    return where, p


def _dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


_IDENTITY = frozenset({"os.path.abspath", "os.path.realpath", "os.path.normpath", "path.abspath", "path.realpath",
                       "path.normpath", "osp.abspath", "osp.realpath", "osp.normpath", "str", "os.fspath"})
_DIRNAME = frozenset({"os.path.dirname", "path.dirname", "osp.dirname"})
_JOIN = frozenset({"os.path.join", "path.join", "osp.join"})


def _eval_path(node: ast.AST, d: str, depth: int = 0, lookup=None) -> Optional[str]:
    """A path expression as a path relative to the scan root (``d``: the file's folder), or None."""
    if depth > 12:
        return None
    if isinstance(node, ast.Name) and node.id == "__file__":
        return _join(d, "__file__")  # a file inside d: dirname() gives d
    if isinstance(node, ast.Name):
        value = lookup(node) if lookup is not None else None
        return _eval_path(value, d, depth + 4, lookup) if value is not None else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if node.value.startswith("/") or node.value.startswith("~"):
            return None
        return norm(_join(d, node.value)) if node.value not in ("", ".") else d
    if isinstance(node, ast.Call):
        name = _dotted(node.func)
        if name in _IDENTITY and len(node.args) == 1:
            return _eval_path(node.args[0], d, depth + 1, lookup)
        if name in _DIRNAME and len(node.args) == 1:
            inner = _eval_path(node.args[0], d, depth + 1, lookup)
            return None if inner is None else _parent(inner)
        if name in _JOIN and node.args:
            base = _eval_path(node.args[0], d, depth + 1, lookup)
            if base is None:
                return None
            for a in node.args[1:]:
                if not (isinstance(a, ast.Constant) and isinstance(a.value, str)) or a.value.startswith("/"):
                    return None
                base = norm(_join(base, a.value))
            return base
        if name in ("Path", "pathlib.Path", "PurePath") and len(node.args) == 1:
            return _eval_path(node.args[0], d, depth + 1, lookup)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute") and not node.args:
            return _eval_path(node.func.value, d, depth + 1, lookup)
        return None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _eval_path(node.value, d, depth + 1, lookup)
        return None if inner is None else _parent(inner)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
        k = node.slice
        if isinstance(k, ast.Index):  # Python 3.8
            k = k.value  # type: ignore[attr-defined]
        if isinstance(k, ast.Constant) and isinstance(k.value, int) and not isinstance(k.value, bool) and k.value >= 0:
            inner = _eval_path(node.value.value, d, depth + 1, lookup)
            if inner is None:
                return None
            p = inner
            for _ in range(k.value + 1):
                p = _parent(p)
            return p
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
        left = _eval_path(node.left, d, depth + 1, lookup)
        r = node.right
        if left is None or not (isinstance(r, ast.Constant) and isinstance(r.value, str)):
            return None
        right = r.value.lstrip("/") if isinstance(node.op, ast.Add) else r.value
        if isinstance(node.op, ast.Add) and not r.value.startswith(("/", "\\")):
            return None  # "dir" + "name": not a path join
        return norm(_join(left, right))
    return None


def name_lookup(bindings, line: int):
    """A ``lookup`` for :func:`path_entry`: the value a name was last assigned before ``line`` in the
    scope it is read from (a plain ``name = value``; None for anything else)."""

    def lookup(name: ast.Name) -> Optional[ast.AST]:
        best = None
        for bnd in bindings.resolve(name):
            if bnd.kind != "assign" or bnd.index is not None or bnd.value is None:
                continue
            at = getattr(bnd.stmt, "lineno", 0)
            if at < line and (best is None or at > best[0]):
                best = (at, bnd.value)
        return best[1] if best is not None else None

    return lookup
