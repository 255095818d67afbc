"""Helpers shared by the checks: device strings, call arguments, fix builders."""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import Optional

from ascendify.diagnostics import Fix

CUDA_DEVICE_RE = re.compile(r"^cuda(:\d+)?$")


def is_cuda_device_string(value: object) -> bool:
    """``"cuda"`` or ``"cuda:N"``."""
    return isinstance(value, str) and bool(CUDA_DEVICE_RE.match(value))


def kwarg(call: ast.Call, name: str) -> Optional[ast.expr]:
    """The value of keyword argument ``name`` of ``call``, or None."""
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def arg(call: ast.Call, pos: int, name: Optional[str] = None) -> Optional[ast.expr]:
    """Positional argument ``pos`` or keyword ``name`` of ``call``."""
    if len(call.args) > pos and not any(isinstance(a, ast.Starred) for a in call.args[: pos + 1]):
        return call.args[pos]
    return kwarg(call, name) if name else None


def method_call(node: ast.Call, *names: str) -> Optional[str]:
    """If ``node`` is ``<expr>.name(...)`` for one of ``names``, return the name."""
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr in names:
        return f.attr
    return None


def torch_root(ctx) -> Optional[str]:
    """The local name bound to the ``torch`` module (``torch`` or an alias), or None."""
    for local, full in ctx.aliases.items():
        if full == "torch":
            return local
    return None


def fix(*edits, safe: bool = True, operation: str = "") -> Fix:
    return Fix(edits=tuple(edits), safe=safe, operation=operation)


@lru_cache(maxsize=1)
def cuda_api_map() -> dict:
    """``torch.cuda`` name → entry (code, npu, agnostic, agnostic_fix, dtype, note) from ``cuda_api_map.toml``
    (the DEV rules of device_api.py and device.py's f-string fix read it)."""
    from importlib import resources

    from ascendify.rules.registry import tomllib

    text = resources.files("ascendify.rules").joinpath("data").joinpath("cuda_api_map.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["api"]
