"""The facade rules query: ``ctx.model`` (built on first use, once per file)."""

from __future__ import annotations

import ast
from typing import Optional

from ascendify.semantic.bindings import Bindings
from ascendify.semantic.branches import Branches, Context
from ascendify.semantic.devices import DeviceValues


class SemanticModel:
    """Scopes, bindings, device values and branch context of one module.

    ``fctx`` is the file's :class:`ascendify.scan.context.FileContext` (import
    aliases and argparse defaults).
    """

    def __init__(self, tree: ast.Module, fctx):
        self.tree = tree
        self.fctx = fctx
        self.bindings = getattr(fctx, "bindings", None) or Bindings(tree)
        self._calls: Optional[dict] = None
        self._selectors: Optional[frozenset] = None
        self.values = DeviceValues(self.bindings, fctx.qualname, fctx.arg_defaults, self.calls_of)
        self.branches = Branches(self.bindings, self.values, fctx.qualname, getattr(fctx, "lines", None))

    def release(self) -> None:
        """Drop every reference the model holds, once the file is analysed: the device values keep
        ``calls_of`` (bound to the model), so model, values and branches are a reference cycle that
        only the cyclic GC could free, with every AST node and memo they reach."""
        for part in (self.values, self.branches):
            part.__dict__.clear()
        self.__dict__.clear()

    # ------------------------------------------------------------------ queries
    def device_of(self, node: Optional[ast.AST]) -> frozenset:
        """The abstract device value of ``node`` (see :mod:`ascendify.semantic.devices`)."""
        return self.values.of(node)

    def context(self, node: ast.AST) -> Context:
        """What the guards around ``node`` mean on an Ascend host."""
        return self.branches.context(node)

    def truth(self, test: ast.AST):
        return self.branches.truth(test)

    def calls_of(self, name: str) -> list:
        """Calls in this file of a function or method named ``name`` (``f(...)``, ``self.f(...)``, ``obj.f(...)``)."""
        if self._calls is None:
            calls: dict = {}
            # the engine's list of calls only once its walk is done: asked mid-walk (a check at a node
            # before the file's last call), a cached partial list would miss the calls not visited yet
            every = getattr(self.fctx, "all_calls", None) if getattr(self.fctx, "walk_done", False) else None
            for n in every if every is not None else ast.walk(self.tree):
                if n.__class__ is ast.Call:
                    f = n.func
                    if f.__class__ is ast.Name:
                        calls.setdefault(f.id, []).append(n)
                    elif f.__class__ is ast.Attribute:
                        calls.setdefault(f.attr, []).append(n)
            self._calls = calls
        return self._calls.get(name, [])

    def impl_selectors(self) -> frozenset:
        """Names whose string values pick an implementation, not a device (:mod:`ascendify.semantic.selectors`):
        from the ``Compare`` nodes the engine's walk collected (``all_compares``, set when the walk is done),
        else from a walk of the tree."""
        if self._selectors is None:
            from ascendify.semantic.selectors import impl_selectors, selectors_of

            compares = getattr(self.fctx, "all_compares", None)
            self._selectors = selectors_of(compares) if compares is not None else impl_selectors(self.tree)
        return self._selectors
