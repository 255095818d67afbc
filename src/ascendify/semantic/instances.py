"""Instances of project classes: which class a called name holds (issue 20, item 2).

``loss_scaler = NativeScaler()`` then ``loss_scaler(loss, opt)`` calls ``NativeScaler.__call__``;
``self.logger = MetricLogger()`` in ``__init__`` then ``self.logger.synchronize_between_processes()``
in another method calls that method of ``MetricLogger``.  The class is known from the binding (the
name's assignments in its scope, or the class's ``self.`` attribute stores), never from a guess at
the name; a name bound to instances of two different classes is left alone.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional


def instance_class(node: ast.AST, bindings, class_ref: Callable[[ast.AST], Optional[str]]) -> Optional[str]:
    """The reference (``class_ref`` of the constructor's callee) of the class whose instance
    ``node`` (a Name, or ``self.attr``) holds, or None.  ``class_ref`` maps a callee expression to
    the reference of a project class or function it names (None for anything else)."""
    values: list = []
    if isinstance(node, ast.Name):
        for bnd in bindings.resolve(node):
            if bnd.kind != "assign" or bnd.index is not None:
                return None  # also a parameter, a loop variable, an unpacked value: not known
            values.append(bnd.value)
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        cls = bindings.self_class_of(node.value)
        if cls is None:
            return None
        values = [v for v, _stmt in bindings.self_stores.get((id(cls), node.attr), ())]
    else:
        return None
    refs = set()
    for v in values:
        if not isinstance(v, ast.Call):
            return None
        r = class_ref(v.func)
        if r is None:
            return None
        refs.add(r)
    return refs.pop() if len(refs) == 1 else None


def method_ref(call: ast.Call, bindings, class_ref: Callable[[ast.AST], Optional[str]]) -> Optional[str]:
    """``Class.__call__`` / ``Class.method`` (as references) for a call on an instance whose
    class :func:`instance_class` knows, or None."""
    f = call.func
    if isinstance(f, ast.Name):
        r = instance_class(f, bindings, class_ref)
        return f"{r}.__call__" if r is not None else None
    if isinstance(f, ast.Attribute) and isinstance(f.value, (ast.Name, ast.Attribute)):
        r = instance_class(f.value, bindings, class_ref)
        return f"{r}.{f.attr}" if r is not None else None
    return None
