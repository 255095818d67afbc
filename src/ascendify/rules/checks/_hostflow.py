"""Does a tensor made on the host reach a device as it is?  (DTY002, field trial issue 23.)

``torch.linspace(0, 1, n, dtype=torch.float64)`` without ``device=`` is a CPU tensor: float64 costs
nothing on the NPU until the value (or one computed from it) is moved there.  Diffusion code builds its
schedules that way and casts them before they are registered (denoising-diffusion-pytorch:
``register_buffer = lambda name, val: self.register_buffer(name, val.to(torch.float32))``), so the
float64 never reaches the NPU.

:func:`stays_on_host` follows the value forward within the file, bounded, and answers True only when
every way it goes ends on the host or in a cast to a non-float64 dtype: a ``.float()``/``.to(torch.float32)``
cast, ``.item()``/``.tolist()``/``.numpy()``/``.shape``, a discarded result; through arithmetic,
subscripts, torch functions and tensor methods (the result is computed from it, on the host), local names
(every load of the name in its function), ``return`` (the calls of a module-level function, also through a
local alias ``fn = schedule``) and calls of a local ``lambda`` (its parameter's uses).  Anything else
(``.to(device)``, ``.cuda()``, ``register_buffer`` or ``nn.Parameter`` of the float64 value, an attribute
store, a call of an unknown function, running out of budget) counts as reaching the device.
"""

from __future__ import annotations

import ast
from typing import Optional

from ascendify.semantic.bindings import ancestors, parent

_NOT_FP64 = frozenset({"torch.float32", "torch.float", "torch.float16", "torch.half", "torch.bfloat16",
                       "torch.int64", "torch.long", "torch.int32", "torch.int", "torch.int16", "torch.int8",
                       "torch.uint8", "torch.bool"})
_CAST_METHODS = frozenset({"float", "half", "bfloat16", "int", "long", "short", "bool", "byte", "char",
                           "item", "tolist", "numpy", "size", "dim", "numel", "nelement", "element_size",
                           "data_ptr", "is_floating_point", "__len__"})
_DEVICE_METHODS = frozenset({"cuda", "npu", "xpu", "mps", "pin_memory", "share_memory_", "double", "type", "set_"})
_META_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout", "names"})
_HOST_BUILTINS = frozenset({"int", "float", "len", "print", "str", "repr", "bool", "isinstance", "format", "round"})
_TO_DEVICE_CALLS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)
_BUDGET = 400


class _Flow:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.steps = 0
        self.seen: set = set()

    def _scope(self, node: ast.AST) -> ast.AST:
        for p in ancestors(node):
            if isinstance(p, _SCOPES):
                return p
        return self.ctx.tree

    def _dtype_ok(self, node: ast.AST) -> bool:
        return self.ctx.qualname(node) in _NOT_FP64

    def _cpu(self, node: ast.AST) -> bool:
        s = self.ctx.resolve_str(node)
        return s is not None and s.split(":")[0] == "cpu"

    def value(self, expr: ast.AST, depth: int = 0) -> bool:
        """True when the value of ``expr`` (a host tensor) and all values computed from it stay on the host."""
        self.steps += 1
        if self.steps > _BUDGET or depth > 40:
            return False
        if id(expr) in self.seen:
            return True  # a cycle (x = x * 2): the other paths decide
        self.seen.add(id(expr))
        p = parent(expr)
        if p is None:
            return False
        if isinstance(p, ast.Attribute):
            if p.attr in _META_ATTRS:
                return True
            call = parent(p)
            if not (isinstance(call, ast.Call) and call.func is p):
                return self.value(p, depth + 1)  # .T, .mT, .data: the same tensor
            return self._method(p.attr, call, depth)
        if isinstance(p, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.IfExp, ast.BoolOp)):
            return self.value(p, depth + 1)
        if isinstance(p, ast.Subscript):
            return self.value(p, depth + 1) if p.value is expr else False
        if isinstance(p, ast.keyword):
            call = parent(p)
            return isinstance(call, ast.Call) and self._argument(call, expr, p.arg, depth)
        if isinstance(p, ast.Call):
            return p.func is not expr and self._argument(p, expr, None, depth)
        if isinstance(p, ast.Expr):
            return True  # the result is dropped
        if isinstance(p, (ast.Assign, ast.AnnAssign)) and p.value is expr:
            targets = p.targets if isinstance(p, ast.Assign) else [p.target]
            return all(isinstance(t, ast.Name) and self._name(t, depth) for t in targets)
        if isinstance(p, ast.Return):
            return self._returned(p, depth)
        if isinstance(p, ast.Lambda) and p.body is expr:
            return self._calls_of_lambda(p, depth)
        return False  # a container, an attribute store, a yield, an argument unpacked...: not followed

    def _method(self, name: str, call: ast.Call, depth: int) -> bool:
        if name in _CAST_METHODS:
            return True
        if name in _DEVICE_METHODS:
            return False
        if name == "to":
            args = list(call.args) + [k.value for k in call.keywords if k.arg in ("dtype", "device", "other")]
            if any(self._dtype_ok(a) for a in args):
                return True  # cast first: float32 (or another dtype) is what moves
            if all(self._cpu(a) for a in args) and args:
                return self.value(call, depth + 1)
            return False
        return self.value(call, depth + 1)  # .sigmoid(), .clamp(...), .clone(), .cpu(): computed on the host

    def _argument(self, call: ast.Call, arg: ast.AST, keyword: Optional[str], depth: int) -> bool:
        f = call.func
        q = self.ctx.qualname(f)
        if isinstance(f, ast.Name) and f.id in _HOST_BUILTINS and q is None:
            return True
        if q is not None and q in _TO_DEVICE_CALLS:
            return False
        if q is not None and q.split(".")[0] == "torch":
            dev = next((k.value for k in call.keywords if k.arg == "device"), None)
            if dev is not None and not self._cpu(dev):
                return False
            dt = next((k.value for k in call.keywords if k.arg == "dtype"), None)
            if dt is not None and self._dtype_ok(dt):
                return True
            return self.value(call, depth + 1)  # torch.cos(t), F.pad(x, ...): a host tensor computed from it
        if isinstance(f, ast.Name) and q is None:
            lam = self.ctx.resolve(f)
            if isinstance(lam, ast.Lambda):
                return self._lambda_param(lam, call, arg, keyword, depth)
        return False

    def _lambda_param(self, lam: ast.Lambda, call: ast.Call, arg: ast.AST, keyword: Optional[str], depth: int) -> bool:
        params = [a.arg for a in lam.args.posonlyargs + lam.args.args]
        name = keyword
        if name is None:
            idx = next((i for i, a in enumerate(call.args) if a is arg), None)
            if idx is None or idx >= len(params):
                return False
            name = params[idx]
        uses = [n for n in ast.walk(lam.body) if isinstance(n, ast.Name) and n.id == name]
        return all(self.value(u, depth + 1) for u in uses)

    def _name(self, target: ast.Name, depth: int) -> bool:
        scope = self._scope(target)
        if isinstance(scope, ast.Module):
            return False  # a module-level name: other modules may import it
        body = scope.body if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)) else [scope.body]
        uses = [n for st in body for n in ast.walk(st)
                if isinstance(n, ast.Name) and n.id == target.id and isinstance(n.ctx, ast.Load)]
        return all(self.value(u, depth + 1) for u in uses)

    def _returned(self, ret: ast.Return, depth: int) -> bool:
        fn = self._scope(ret)
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not isinstance(parent(fn), ast.Module):
            return False  # a method or a nested function: its callers are not followed
        return self._calls_of_name(fn.name, self.ctx.tree, depth)

    def _calls_of_name(self, name: str, scope: ast.AST, depth: int) -> bool:
        loads = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        for n in loads:
            p = parent(n)
            if isinstance(p, ast.Call) and p.func is n:
                if not self.value(p, depth + 1):
                    return False
            elif isinstance(p, ast.Assign) and p.value is n and len(p.targets) == 1 and isinstance(p.targets[0], ast.Name):
                alias = p.targets[0].id
                if alias == name or not self._calls_of_name(alias, self._scope(p), depth + 1):
                    return False
            else:
                return False  # passed on, stored: not followed
        return True

    def _calls_of_lambda(self, lam: ast.Lambda, depth: int) -> bool:
        p = parent(lam)
        if isinstance(p, ast.Assign) and len(p.targets) == 1 and isinstance(p.targets[0], ast.Name):
            return self._calls_of_name(p.targets[0].id, self._scope(p), depth + 1)
        return False


def stays_on_host(expr: ast.AST, ctx) -> bool:
    """True when the host tensor ``expr`` evaluates to provably never reaches a device as float64."""
    return _Flow(ctx).value(expr)
