"""Load a model from ``pkg.module:factory`` and flatten its outputs."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any

from ascendify.errors import AscendifyError


#: the seed of torch's global RNG right before every factory call (see :func:`seeded_call`)
FACTORY_SEED = 0


def seeded_call(factory: Any) -> Any:
    """``factory()`` with ``torch.manual_seed(FACTORY_SEED)`` right before it, so a model with
    random weights is the same model in every command: ``probe``, ``export``, ``baseline``,
    ``compare`` (a PyTorch candidate), ``fit`` all build their models through this one call
    (docs/export-and-compare.md, "Random weights").  A model built at import time (a module
    instance as the target) is not covered: it is built before any command can seed."""
    import torch

    torch.manual_seed(FACTORY_SEED)
    return factory()


def load_factory(spec: str, search_path: str | None = None) -> Any:
    """Import ``pkg.module:attr`` and return an ``nn.Module`` in eval mode.

    ``attr`` may be a factory function (called with no arguments), an ``nn.Module``
    subclass (instantiated) or a module instance; it is called through
    :func:`seeded_call` (torch's RNG seeded with 0 first).  The current folder (or
    ``search_path``) is put first on ``sys.path``.  Raises ``AscendifyError`` with a
    one-line reason when the module or attribute cannot be loaded."""
    import torch

    if ":" not in spec:
        raise AscendifyError(f"'{spec}': give the model as pkg.module:factory (e.g. mypkg.models:build_model)")
    mod_name, attr = spec.split(":", 1)
    root = os.path.abspath(search_path or os.getcwd())
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        mod = importlib.import_module(mod_name)
    except Exception as exc:  # noqa: BLE001 - user code can raise anything
        raise AscendifyError(f"cannot import '{mod_name}' for {spec}: {type(exc).__name__}: {exc}") from None
    obj: Any = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise AscendifyError(f"'{mod_name}' has no attribute '{attr}' ({spec})")
        obj = getattr(obj, part)
    try:
        if isinstance(obj, torch.nn.Module):
            model = obj
        elif inspect.isclass(obj) or callable(obj):
            model = seeded_call(obj)
        else:
            raise AscendifyError(f"{spec} is neither an nn.Module nor a factory")
    except AscendifyError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise AscendifyError(f"calling {spec}() failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(model, torch.nn.Module):
        raise AscendifyError(f"{spec}() returned {type(model).__name__}, not a torch.nn.Module")
    return model.eval()


def forward_input_names(model: Any) -> list[str]:
    """Positional parameter names of ``model.forward`` (without ``self``/varargs)."""
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def flatten_outputs(out: Any, names: list[str] | None = None) -> list[tuple[str, Any]]:
    """Flatten a model result into ``[(name, tensor)]``: a tensor → ``output``; a
    tuple/list → ``output0``…; a dict / ModelOutput → its keys (nested with ``.``).
    ``names`` overrides the names in order (count must match)."""
    import torch

    flat: list[tuple[str, Any]] = []

    def walk(o: Any, name: str) -> None:
        if isinstance(o, torch.Tensor):
            flat.append((name, o))
        elif isinstance(o, dict) or hasattr(o, "items") and hasattr(o, "keys"):
            for k, v in o.items():
                walk(v, f"{name}.{k}" if name != "output" else str(k))
        elif isinstance(o, (list, tuple)):
            for i, v in enumerate(o):
                walk(v, f"{name}{i}" if name == "output" else f"{name}.{i}")
        elif o is None:
            return
        else:
            raise AscendifyError(f"model output of type {type(o).__name__} is not a tensor, tuple or dict")

    walk(out, "output")
    if names:
        if len(names) != len(flat):
            raise AscendifyError(f"--output-names gives {len(names)} names but the model returns {len(flat)} tensors")
        flat = [(n, t) for n, (_, t) in zip(names, flat)]
    return flat
