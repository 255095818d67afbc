"""Scopes and bindings, built in one pass over the statements of a module.

Every statement gets a :class:`StmtInfo` (its scope and the guards it sits
under, see :mod:`ascendify.semantic.branches`); every name a statement binds
gets a :class:`Binding`.  Resolution follows Python's rules: the enclosing
function scopes, then the module (class bodies are skipped from nested
functions), with ``global``/``nonlocal`` honoured.  The model is flow
insensitive inside a scope: a name's value is the union of what is bound to it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterator, Optional

_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)
_JUMPS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


@dataclass(eq=False)
class Scope:
    kind: str  # "module" | "class" | "function"
    node: ast.AST
    parent: Optional["Scope"]
    bindings: dict = field(default_factory=dict)  # name -> list[Binding]
    globals: set = field(default_factory=set)
    nonlocals: set = field(default_factory=set)
    returns: list = field(default_factory=list)  # return-value expressions (functions)
    children: list = field(default_factory=list)  # nested function/class scopes, in source order
    start: tuple = (0, 0)  # (line, col) of the first body statement: the header belongs to the parent
    end: tuple = (1 << 30, 0)


@dataclass(eq=False)
class Binding:
    """One place a name is bound.

    ``value`` is the expression bound (None when not a plain value: a ``for``
    target, ``with ... as``, ``except ... as``, a parameter without default);
    ``index`` the position in a tuple target (``a, b = f()``).
    """

    name: str
    kind: str  # "assign" | "param" | "import" | "def" | "class" | "for" | "with" | "except" | "augassign" | "unpack"
    stmt: ast.AST
    value: Optional[ast.AST]
    scope: Scope
    index: Optional[int] = None
    module: Optional[str] = None  # imports: the full dotted name imported
    level: int = 0  # relative import level


@dataclass(eq=False)
class Guard:
    """A condition a statement runs under: ``test`` is true (``polarity``) or false there.

    ``kind``: "if" (body or else), "exit" (statements after ``if test: return``),
    "assert", "and"/"ifexp" (expression-level), "try" (the body of a ``try``
    whose handlers catch ImportError), "except" (such a handler: a fallback).
    """

    test: Optional[ast.AST]
    polarity: bool
    kind: str
    node: ast.AST  # the If / Assert / Try / ExceptHandler that makes the guard
    handlers: tuple = ()  # exception names, for "try"/"except"


class StmtInfo(tuple):
    """(scope, guards outermost first) of one statement: a tuple, as there is one per statement."""

    __slots__ = ()

    @property
    def scope(self) -> Scope:
        return self[0]

    @property
    def guards(self) -> tuple:
        return self[1]


def _handler_names(h: ast.ExceptHandler) -> tuple:
    t = h.type
    items = t.elts if isinstance(t, ast.Tuple) else [t] if t is not None else []
    out = []
    for it in items:
        if isinstance(it, ast.Name):
            out.append(it.id)
        elif isinstance(it, ast.Attribute):
            out.append(it.attr)
    return tuple(out) or ("BaseException",)


def handler_reraises(h: ast.ExceptHandler) -> bool:
    """The handler raises at its top level (``except ImportError: raise``, ``raise RuntimeError(...) from e``):
    the error still stops the code, so the handler is no fallback and its ``try`` no guard."""
    return any(s.__class__ is ast.Raise for s in h.body)


_SKIP_IF = frozenset({"skipIf", "skipif"})
_SKIP_UNLESS = frozenset({"skipUnless"})


def _decorator_guards(fn: ast.AST) -> tuple:
    """``@unittest.skipIf(cond, ...)`` / ``@pytest.mark.skipif(cond, ...)``: the body runs only when
    ``cond`` is false; ``@unittest.skipUnless(cond, ...)``: only when it is true."""
    out = []
    for d in fn.decorator_list:
        if not (isinstance(d, ast.Call) and d.args):
            continue
        f = d.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name in _SKIP_IF:
            out.append(Guard(d.args[0], False, "if", d))
        elif name in _SKIP_UNLESS:
            out.append(Guard(d.args[0], True, "if", d))
    return tuple(out)


def _ends_in_jump(body: list) -> bool:
    return bool(body) and isinstance(body[-1], _JUMPS)


class Bindings:
    """Scopes, bindings and statement facts of one module."""

    def __init__(self, tree: ast.Module, record=None):
        self._record = record  # called with (stmt, scope node) for every statement (FileContext's tables)
        self.module_scope = Scope("module", tree, None)
        self.stmts: dict = {}  # id(stmt) -> StmtInfo
        self.scopes: dict = {id(tree): self.module_scope}  # id(def/class node) -> Scope
        # attribute stores: (object name, attr) -> list[(value, stmt)] for `args.x = v`, any scope
        self.attr_stores: dict = {}
        # class attribute stores: (id(ClassDef), attr) -> list[(value, stmt)] for `self.x = v` in its methods
        self.self_stores: dict = {}
        self.calls: dict = {}  # function name -> list[ast.Call] of local calls (filled by the walk)
        self.functions: dict = {}  # id(def) -> (Scope, ClassDef or None)
        self._build(tree.body, self.module_scope, ())

    def release(self) -> None:
        """Break the scope tree's reference cycles once the file is analysed (a scope's parent lists
        it among its children; a binding names its scope, which lists the binding), so reference
        counting frees the scopes, bindings and the AST nodes they hold, without the cyclic GC."""
        for sc in self.scopes.values():
            sc.parent = None
            sc.children = []
            sc.bindings = {}
        self.__dict__.clear()

    # ------------------------------------------------------------------ building
    def _bind(self, scope: Scope, name: str, kind: str, stmt: ast.AST, value: Optional[ast.AST], **kw) -> None:
        if name in scope.globals:
            scope = self.module_scope
        scope.bindings.setdefault(name, []).append(Binding(name, kind, stmt, value, scope, **kw))

    def _bind_target(self, scope: Scope, target: ast.AST, stmt: ast.AST, value: Optional[ast.AST], kind: str) -> None:
        cls = target.__class__
        if cls is ast.Name:
            self._bind(scope, target.id, kind, stmt, value)
        elif cls in (ast.Tuple, ast.List):
            elts = target.elts
            same = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(elts)
            for i, elt in enumerate(elts):
                if isinstance(elt, ast.Starred):
                    elt = elt.value
                    self._bind_target(scope, elt, stmt, None, "unpack")
                elif same:
                    self._bind_target(scope, elt, stmt, value.elts[i], kind)
                elif isinstance(elt, ast.Name):
                    self._bind(scope, elt.id, "unpack", stmt, value, index=i)
                else:
                    self._bind_target(scope, elt, stmt, None, "unpack")
        elif cls is ast.Attribute:
            obj = target.value
            if isinstance(obj, ast.Name):
                self.attr_stores.setdefault((obj.id, target.attr), []).append((value, stmt))
                cls_node = self._self_class(scope, obj.id)
                if cls_node is not None:
                    self.self_stores.setdefault((id(cls_node), target.attr), []).append((value, stmt))
        elif cls is ast.Starred:
            self._bind_target(scope, target.value, stmt, None, "unpack")

    def _self_class(self, scope: Scope, name: str) -> Optional[ast.ClassDef]:
        """The class whose instance ``name`` is, when ``name`` is the first parameter of a method."""
        if scope.kind != "function":
            return None
        info = self.functions.get(id(scope.node))
        if info is None or info[1] is None:
            return None
        args = scope.node.args.posonlyargs + scope.node.args.args
        return info[1] if args and args[0].arg == name else None

    def _build(self, body: list, scope: Scope, guards: tuple) -> None:
        exit_guards: tuple = ()
        record = self._record
        for stmt in body:
            g = guards + exit_guards
            self.stmts[id(stmt)] = StmtInfo((scope, g))
            if record is not None:
                record(stmt, scope.node)
            self._stmt(stmt, scope, g)
            # `if not torch.cuda.is_available(): return x` makes what follows a branch (the NPU host takes
            # the early return); `assert torch.cuda.is_available()` and `if ...: raise` stop the program
            # instead — the test is the error, and what follows is the main path, not dead code
            if isinstance(stmt, ast.If) and _ends_in_jump(stmt.body) and not stmt.orelse and not isinstance(stmt.body[-1], ast.Raise):
                exit_guards = exit_guards + (Guard(stmt.test, False, "exit", stmt),)

    def _stmt(self, stmt: ast.AST, scope: Scope, guards: tuple) -> None:
        cls = stmt.__class__
        if cls is ast.Assign:
            for t in stmt.targets:
                self._bind_target(scope, t, stmt, stmt.value, "assign")
        elif cls is ast.AnnAssign:
            if stmt.value is not None:
                self._bind_target(scope, stmt.target, stmt, stmt.value, "assign")
        elif cls is ast.AugAssign:
            self._bind_target(scope, stmt.target, stmt, None, "augassign")
        elif cls is ast.Import:
            for a in stmt.names:
                if a.asname:
                    self._bind(scope, a.asname, "import", stmt, None, module=a.name)
                else:
                    root = a.name.split(".")[0]
                    self._bind(scope, root, "import", stmt, None, module=root)
        elif cls is ast.ImportFrom:
            for a in stmt.names:
                if a.name == "*":
                    continue
                full = f"{stmt.module}.{a.name}" if stmt.module else a.name
                self._bind(scope, a.asname or a.name, "import", stmt, None, module=full, level=stmt.level or 0)
        elif cls in _FUNC:
            self._bind(scope, stmt.name, "def", stmt, stmt)
            fscope = self._child_scope("function", stmt, scope)
            self.functions[id(stmt)] = (fscope, scope.node if scope.kind == "class" else None)
            a = stmt.args
            positional = a.posonlyargs + a.args
            defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
            for arg, d in zip(positional, defaults):
                fscope.bindings.setdefault(arg.arg, []).append(Binding(arg.arg, "param", stmt, d, fscope))
            for arg, d in zip(a.kwonlyargs, a.kw_defaults):
                fscope.bindings.setdefault(arg.arg, []).append(Binding(arg.arg, "param", stmt, d, fscope))
            for arg in (a.vararg, a.kwarg):
                if arg is not None:
                    fscope.bindings.setdefault(arg.arg, []).append(Binding(arg.arg, "param", stmt, None, fscope))
            # a method of a skipped test class never runs either: the class's skip conditions hold in it
            self._build(stmt.body, fscope, (guards if scope.kind == "class" else ()) + _decorator_guards(stmt))
        elif cls is ast.ClassDef:
            self._bind(scope, stmt.name, "class", stmt, stmt)
            cscope = self._child_scope("class", stmt, scope)
            self._build(stmt.body, cscope, _decorator_guards(stmt))
        elif cls is ast.If:
            self._build(stmt.body, scope, guards + (Guard(stmt.test, True, "if", stmt),))
            self._build(stmt.orelse, scope, guards + (Guard(stmt.test, False, "if", stmt),))
        elif cls in (ast.For, ast.AsyncFor):
            self._bind_target(scope, stmt.target, stmt, None, "for")
            self._build(stmt.body, scope, guards)
            self._build(stmt.orelse, scope, guards)
        elif cls is ast.While:
            self._build(stmt.body, scope, guards + (Guard(stmt.test, True, "if", stmt),))
            self._build(stmt.orelse, scope, guards)
        elif cls in (ast.With, ast.AsyncWith):
            for item in stmt.items:
                if item.optional_vars is not None:
                    self._bind_target(scope, item.optional_vars, stmt, None, "with")
            self._build(stmt.body, scope, guards)
        elif cls is ast.Try or cls.__name__ == "TryStar":
            # handlers that re-raise catch nothing for the body: it is guarded only by those that fall back
            names = tuple(n for h in stmt.handlers if not handler_reraises(h) for n in _handler_names(h))
            self._build(stmt.body, scope, guards + (Guard(None, True, "try", stmt, names),))
            for h in stmt.handlers:
                self.stmts[id(h)] = StmtInfo((scope, guards))
                if h.name:
                    self._bind(scope, h.name, "except", h, None)
                self._build(h.body, scope, guards + (Guard(None, True, "except", h, _handler_names(h)),))
            self._build(stmt.orelse, scope, guards)
            self._build(stmt.finalbody, scope, guards)
        elif cls is ast.Return:
            if stmt.value is not None and scope.kind == "function":
                scope.returns.append(stmt.value)
        elif cls is ast.Global:  # Python requires it before any use of the names in the scope
            scope.globals.update(stmt.names)
        elif cls is ast.Nonlocal:
            scope.nonlocals.update(stmt.names)
        elif cls.__name__ == "Match":
            for case in stmt.cases:
                self._build(case.body, scope, guards)

    def _child_scope(self, kind: str, stmt: ast.AST, parent: Scope) -> Scope:
        first = stmt.body[0]
        sc = Scope(kind, stmt, parent, start=(first.lineno, first.col_offset),
                   end=(getattr(stmt, "end_lineno", 1 << 30) or (1 << 30), getattr(stmt, "end_col_offset", 0) or 0))
        parent.children.append(sc)
        self.scopes[id(stmt)] = sc
        return sc

    # ------------------------------------------------------------------ queries
    def info(self, stmt: ast.AST) -> Optional[StmtInfo]:
        return self.stmts.get(id(stmt))

    def scope_of(self, node: ast.AST) -> Scope:
        """The scope ``node`` runs in, by its position (works for nodes the walk has not reached)."""
        stmt = self.stmts.get(id(node))
        if stmt is not None:
            return stmt.scope
        pos = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        scope = self.module_scope
        while True:
            for child in scope.children:
                if child.start <= pos <= child.end:
                    scope = child
                    break
            else:
                return scope

    def lookup(self, name: str, scope: Scope) -> list:
        """Bindings of ``name`` visible from ``scope`` (innermost binding scope wins)."""
        if name in scope.globals:
            return self.module_scope.bindings.get(name, [])
        s: Optional[Scope] = scope
        first = True
        while s is not None:
            if s.kind != "class" or first:
                found = s.bindings.get(name)
                if found and (s is not scope or name not in scope.nonlocals):
                    return found
            first = False
            s = s.parent
        return []

    def resolve(self, name: ast.Name) -> list:
        return self.lookup(name.id, self.scope_of(name))

    def class_scope(self, node: ast.ClassDef) -> Optional[Scope]:
        return self.scopes.get(id(node))

    def self_class_of(self, name: ast.Name) -> Optional[ast.ClassDef]:
        """The class whose instance ``name`` is (``self`` in one of its methods, or in a function
        nested in one), or None."""
        scope = self.scope_of(name)
        while scope is not None and scope.kind == "function":
            got = self._self_class(scope, name.id)
            if got is not None:
                return got
            if any(b.scope is scope for b in scope.bindings.get(name.id, ())):
                return None
            scope = scope.parent
        return None

    def stores_of(self, node: ast.Attribute) -> tuple:
        """(the values stored to ``obj.attr`` as (value, stmt) pairs, the class when ``obj`` is its
        ``self``): the class's own ``self.attr = ...`` stores, else every ``obj.attr = ...`` in the file."""
        obj = node.value
        if not isinstance(obj, ast.Name):
            return [], None
        cls_node = self.self_class_of(obj)
        stores = self.self_stores.get((id(cls_node), node.attr)) if cls_node is not None else None
        return (stores or self.attr_stores.get((obj.id, node.attr), [])), cls_node

    def returns_of(self, fn: ast.AST) -> list:
        """The expressions a function returns (``return x``)."""
        sc = self.scopes.get(id(fn))
        return sc.returns if sc is not None else []


def statement_of(node: ast.AST) -> Optional[ast.AST]:
    """The innermost statement (or except handler) holding ``node`` (itself if a statement)."""
    n: Optional[ast.AST] = node
    while n is not None and not isinstance(n, (ast.stmt, ast.ExceptHandler)):
        n = getattr(n, "_asc_parent", None)
    return n


def parent(node: ast.AST) -> Optional[ast.AST]:
    """The node's parent (set by the engine's walk), or None for the module."""
    return getattr(node, "_asc_parent", None)


def param_default_of(node: ast.AST) -> Optional[str]:
    """The parameter whose default is ``node`` (``def f(amp, device="cuda")`` → ``"device"``), or None."""
    p = parent(node)
    if not isinstance(p, ast.arguments):
        return None
    positional = p.posonlyargs + p.args
    for arg, d in zip(positional[len(positional) - len(p.defaults):], p.defaults):
        if d is node:
            return arg.arg
    for arg, d in zip(p.kwonlyargs, p.kw_defaults):
        if d is node:
            return arg.arg
    return None


def ancestors(node: ast.AST) -> Iterator[ast.AST]:
    """Parents of ``node``, nearest first."""
    p = getattr(node, "_asc_parent", None)
    while p is not None:
        yield p
        p = getattr(p, "_asc_parent", None)


def dotted(node: ast.AST) -> Optional[str]:
    """Raw dotted text of a Name/Attribute chain (no import resolution)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None
