"""Per-file analysis context: import aliases, constants, argparse defaults, parents.

Name resolution covers what real training scripts do:

* ``import torch as t`` / ``from torch import cuda`` /
  ``from torch.cuda.amp import autocast as ac`` → :meth:`FileContext.qualname`
  gives ``torch.cuda.amp.autocast`` for ``ac``;
* simple constants: ``DEVICE = "cuda"`` at module or function level, then
  ``.to(DEVICE)`` → :meth:`FileContext.resolve_str` gives ``"cuda"``;
* argparse: ``parser.add_argument("--dist-backend", default="nccl")`` then
  ``args.dist_backend`` → ``"nccl"`` (with the defining node, so a rule can
  report and fix the default where it is written).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable, Optional, Type, TypeVar

from ascendify.semantic.bindings import ancestors, dotted, parent  # noqa: F401  (tree helpers: the model's, re-exported here)

_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
S = TypeVar("S")


@dataclass
class ArgDefault:
    """An argparse option's default: the value and the node it is written at."""

    dest: str
    value: Any
    node: ast.AST  # the default's expression node
    call: ast.Call  # the add_argument call
    type_name: Optional[str] = None


class FileContext:
    """What rules know about one file, computed once in a statement-only pre-pass."""

    def __init__(self, tree: ast.Module, text: str):
        self.tree = tree
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.aliases: dict[str, str] = {}
        self.imported_modules: set[str] = set()  # full dotted names of every import
        self.import_nodes: list[ast.stmt] = []
        # (scope node id, name) -> list of assigned value nodes; None value = not a simple assignment
        self.assignments: dict[tuple[int, str], list[Optional[ast.AST]]] = {}
        self.arg_defaults: dict[str, ArgDefault] = {}
        self.functions: list[ast.AST] = []
        self._qual_cache: dict[int, Optional[str]] = {}
        self._states: dict[type, Any] = {}
        self._prepass(tree)

    # ------------------------------------------------------------------ rule state
    def state(self, kind: "Type[S]", make: "Optional[Callable[[FileContext], S]]" = None) -> S:
        """This file's instance of the rule state ``kind``: a class (a dataclass) that a rule module
        declares for what its node checks collect and its file check reads after the walk, or for a
        per-file memo.  Built on first use with ``make(self)``, or ``kind()`` without ``make``.
        The one place a rule keeps per-file state (never ad hoc attributes on the context)."""
        st = self._states.get(kind)
        if st is None:
            st = self._states[kind] = make(self) if make is not None else kind()
        return st

    def peek_state(self, kind: "Type[S]") -> "Optional[S]":
        """The file's ``kind`` state if a check has made it, else None (a file check whose node
        checks recorded nothing returns early without building one)."""
        return self._states.get(kind)

    # ------------------------------------------------------------------ pre-pass
    def _prepass(self, tree: ast.Module) -> None:
        """One pass over the statements: the semantic model's scopes and bindings, which call
        :meth:`_record` for each statement to fill the tables above."""
        from ascendify.semantic.bindings import Bindings

        self.bindings = Bindings(tree, self._record)

    def _record(self, stmt: ast.stmt, scope: ast.AST) -> None:
        """Aliases, imports, simple assignments and argparse defaults of one statement (``scope`` is
        the def, class or module it runs in)."""
        cls = stmt.__class__
        if cls is ast.Import:
            self.import_nodes.append(stmt)
            for a in stmt.names:
                self.imported_modules.add(a.name)
                if a.asname:
                    self.aliases[a.asname] = a.name
                else:
                    root = a.name.split(".")[0]
                    self.aliases.setdefault(root, root)
        elif cls is ast.ImportFrom:
            self.import_nodes.append(stmt)
            if stmt.module and not stmt.level:
                self.imported_modules.add(stmt.module)
                for a in stmt.names:
                    if a.name != "*":
                        self.aliases[a.asname or a.name] = f"{stmt.module}.{a.name}"
        elif cls is ast.Assign or cls is ast.AnnAssign or cls is ast.AugAssign:
            targets = stmt.targets if cls is ast.Assign else [stmt.target]
            value = stmt.value if cls is not ast.AugAssign else None
            for t in targets:
                if isinstance(t, ast.Name):
                    self.assignments.setdefault((id(scope), t.id), []).append(value)
                elif isinstance(t, (ast.Tuple, ast.List)):
                    for elt in t.elts:
                        if isinstance(elt, ast.Name):
                            self.assignments.setdefault((id(scope), elt.id), []).append(None)
            if value is not None:
                self._scan_argparse(value)
        elif cls is ast.Expr and isinstance(stmt.value, ast.Call):
            self._scan_argparse(stmt.value)
        elif cls is ast.FunctionDef or cls is ast.AsyncFunctionDef:
            self.functions.append(stmt)
            for arg in stmt.args.args + stmt.args.kwonlyargs + stmt.args.posonlyargs:
                self.assignments.setdefault((id(stmt), arg.arg), []).append(None)
        elif (cls is ast.For or cls is ast.AsyncFor) and isinstance(stmt.target, ast.Name):
            # for-loop targets bind names too: mark them not simple
            self.assignments.setdefault((id(scope), stmt.target.id), []).append(None)

    def _scan_argparse(self, call: ast.AST) -> None:
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument"):
            return
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        if "default" not in kw:
            return
        dest = None
        if isinstance(kw.get("dest"), ast.Constant) and isinstance(kw["dest"].value, str):
            dest = kw["dest"].value
        else:
            opts = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            longs = [o for o in opts if o.startswith("--")]
            name = (longs or opts or [None])[0]
            if name:
                dest = name.lstrip("-").replace("-", "_")
        if not dest:
            return
        d = kw["default"]
        value = d.value if isinstance(d, ast.Constant) else None
        tname = kw["type"].id if isinstance(kw.get("type"), ast.Name) else None
        self.arg_defaults[dest] = ArgDefault(dest, value, d, call, tname)

    # ------------------------------------------------------------------ names
    def qualname(self, node: ast.AST) -> Optional[str]:
        """Full dotted name of a Name/Attribute whose root is an import, else None.

        ``t.cuda.is_available`` with ``import torch as t`` → ``torch.cuda.is_available``.
        """
        key = id(node)
        if key in self._qual_cache:
            return self._qual_cache[key]
        result = None
        if isinstance(node, ast.Name):
            result = self.aliases.get(node.id)
            if result is not None:
                result = self._import_binding(node)
        elif isinstance(node, ast.Attribute):
            base = self.qualname(node.value)
            if base is not None:
                result = f"{base}.{node.attr}"
        self._qual_cache[key] = result
        return result

    def _import_binding(self, node: ast.Name) -> Optional[str]:
        """What the name ``node`` imports where it is used (Python's scope rules): None when a
        parameter or assignment of an enclosing scope shadows the import (``def b(sync): sync()``
        with ``from torch.cuda import synchronize as sync`` in another function), or when the
        import is not visible there."""
        local = self.__dict__.get("_locally_bound")
        if local is None:  # names bound in a function or class scope: only those need the scope walk
            local = self._locally_bound = {n for sc in self.bindings.scopes.values() if sc.kind != "module" for n in sc.bindings}
        if node.id not in local:
            found = self.bindings.module_scope.bindings.get(node.id, ())
        else:
            found = self.bindings.resolve(node)
        imports = [b for b in found if b.kind == "import" and not b.level]
        if not imports:
            return None
        return imports[-1].module

    def call_name(self, call: ast.Call) -> Optional[str]:
        """Qualified name of the called function (see :meth:`qualname`)."""
        return self.qualname(call.func)

    @staticmethod
    def dotted(node: ast.AST) -> Optional[str]:
        """Raw dotted text of a Name/Attribute chain (no import resolution)."""
        return dotted(node)

    def has_import(self, module: str) -> bool:
        """True if ``module`` (or a submodule of it) is imported anywhere in the file."""
        return any(m == module or m.startswith(module + ".") for m in self.imported_modules)

    # ------------------------------------------------------------------ values
    def scope_of(self, node: ast.AST) -> ast.AST:
        for p in ancestors(node):
            if isinstance(p, _SCOPE):
                return p
        return self.tree

    def assigned_values(self, name: ast.Name) -> list[Optional[ast.AST]]:
        """Values assigned to ``name`` in its function scope, else at module level."""
        scope = self.scope_of(name)
        vals = self.assignments.get((id(scope), name.id))
        if vals is None and scope is not self.tree:
            vals = self.assignments.get((id(self.tree), name.id))
        return vals or []

    def resolve(self, node: Optional[ast.AST], _depth: int = 0) -> Optional[ast.AST]:
        """Follow a Name to the single expression it is (always) assigned.

        Returns the node itself when it is not a Name; None when the name is
        assigned more than one distinct thing or something not simple.
        Also follows ``args.x`` to an argparse default.
        """
        if node is None or _depth > 5:
            return None
        if isinstance(node, ast.Name):
            vals = self.assigned_values(node)
            if not vals or any(v is None for v in vals):
                return None
            first = ast.dump(vals[0])
            if any(ast.dump(v) != first for v in vals[1:]):
                return None
            return self.resolve(vals[0], _depth + 1)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in self.arg_defaults:
            if self.qualname(node.value) is None:  # args.x, not torch.x
                return self.arg_defaults[node.attr].node
        return node

    def resolve_str(self, node: Optional[ast.AST]) -> Optional[str]:
        """The string a node evaluates to, if it is a literal or resolves to one.

        f-strings give their leading literal part (``f"cuda:{rank}"`` → ``"cuda:"``).
        """
        target = self.resolve(node)
        if isinstance(target, ast.Constant) and isinstance(target.value, str):
            return target.value
        if isinstance(target, ast.JoinedStr) and target.values:
            first = target.values[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                return first.value
        return None

    def arg_default_for(self, node: ast.AST) -> Optional[ArgDefault]:
        """The argparse default behind ``args.x`` (None for anything else)."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and self.qualname(node.value) is None:
            return self.arg_defaults.get(node.attr)
        return None

    # ------------------------------------------------------------------ places
    @staticmethod
    def enclosing_function(node: ast.AST) -> Optional[ast.AST]:
        for p in ancestors(node):
            if isinstance(p, _FUNC):
                return p
        return None

    @staticmethod
    def enclosing_class(node: ast.AST) -> Optional[ast.ClassDef]:
        for p in ancestors(node):
            if isinstance(p, ast.ClassDef):
                return p
        return None

    @staticmethod
    def in_loop(node: ast.AST) -> bool:
        """True if ``node`` is inside a for/while loop of its own function."""
        for p in ancestors(node):
            if isinstance(p, _LOOPS):
                return True
            if isinstance(p, _FUNC + (ast.ClassDef,)):
                return False
        return False

    def in_forward(self, node: ast.AST) -> bool:
        """True if ``node`` is inside a ``forward`` method of a class."""
        fn = self.enclosing_function(node)
        return fn is not None and fn.name == "forward" and isinstance(parent(fn), ast.ClassDef)

    def segment(self, node: ast.AST) -> str:
        """Source text of ``node`` (single- or multi-line), as ``ast.get_source_segment``
        gives it but without re-splitting the file on every call."""
        try:
            first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
            col, end_col = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        except AttributeError:
            return ""
        if first < 0 or last >= len(self.lines) or end_col is None:
            return ""
        if first == last:
            line = self.lines[first]
            if line.isascii():
                return line[col:end_col]
            return line.encode("utf-8")[col:end_col].decode("utf-8", "replace")
        parts = [self.lines[first].encode("utf-8")[col:].decode("utf-8", "replace")]
        parts.extend(self.lines[first + 1 : last])
        parts.append(self.lines[last].encode("utf-8")[:end_col].decode("utf-8", "replace"))
        return "".join(parts)
