"""Model mode: build ``pkg.module:factory``, run it on the CPU (or meta device) under the recorder."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import time
import warnings

from ascendify.errors import AscendifyError
from ascendify.kb import ops as kbops
from ascendify.probe.recorder import OpRecorder


def load_factory(target: str):
    """``pkg.module:factory`` (or ``path/to/file.py:factory``) → the callable.

    Raises :class:`AscendifyError` with one line naming the target and what to do.
    """
    if ":" not in target:
        raise AscendifyError(f"'{target}': expected pkg.module:factory (a function or class returning an nn.Module)")
    mod_name, attr = target.rsplit(":", 1)
    sys.dont_write_bytecode = True  # probing never writes into the user's tree (no __pycache__)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        if mod_name.endswith(".py"):
            path = os.path.abspath(mod_name)
            if not os.path.exists(path):
                raise AscendifyError(f"'{mod_name}': file not found")
            spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = mod
            spec.loader.exec_module(mod)
        else:
            mod = importlib.import_module(mod_name)
    except AscendifyError:
        raise
    except BaseException as exc:  # noqa: BLE001 - any import-time failure is the user's
        raise AscendifyError(f"cannot import '{mod_name}' for {target}: {type(exc).__name__}: {exc} "
                             "(run from the project root or set PYTHONPATH)") from None
    obj = mod
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise AscendifyError(f"'{mod_name}' has no attribute '{attr}' (the factory after ':')")
    if not callable(obj):
        raise AscendifyError(f"{target} is not callable; point at a function or class that returns the model")
    return obj


def build_model(target: str):
    """``target``'s model, built with torch's RNG seeded first (export.loader.seeded_call)."""
    from ascendify.export.loader import seeded_call

    factory = load_factory(target)
    try:
        model = seeded_call(factory)
    except BaseException as exc:  # noqa: BLE001
        raise AscendifyError(f"{target}() failed while building the model: {type(exc).__name__}: {exc}") from None
    import torch
    if not isinstance(model, torch.nn.Module) and not callable(model):
        raise AscendifyError(f"{target}() returned {type(model).__name__}, not an nn.Module or callable")
    return model


def _loss_from(out):
    import torch
    terms = []

    def walk(o):
        if isinstance(o, torch.Tensor):
            if o.requires_grad and (o.is_floating_point() or o.is_complex()):
                terms.append(o.float().mean() if not o.is_complex() else o.abs().float().mean())
        elif isinstance(o, dict):
            for v in o.values():
                walk(v)
        elif isinstance(o, (list, tuple)):
            for v in o:
                walk(v)
        elif hasattr(o, "to_tuple"):
            walk(o.to_tuple())
    walk(out)
    if not terms:
        return None
    return sum(terms)


def run_once(model, specs, *, train: bool, device: str, release: str, seed: int = 0,
             skip_files: tuple = ()) -> dict:
    """One forward (+ backward) pass under :class:`OpRecorder`; never raises for model errors."""
    import torch
    table = kbops.load_release(release)

    def reenter(op: str) -> bool:
        r = table.ops.get(op)
        return r is not None and r[0] == "composite_explicit"

    gen = torch.Generator().manual_seed(seed)
    inputs = [s.make(device, gen) for s in specs]
    rec = OpRecorder(reenter=reenter, skip_files=skip_files)
    err = None
    t0 = time.perf_counter()
    import contextlib
    devctx = torch.device("meta") if device == "meta" else contextlib.nullcontext()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with devctx, rec:
                if train:
                    model.train()
                    rec.phase = "forward"
                    out = _call(model, specs, inputs)
                    with rec.suspended():  # the probe's own loss is not the model's
                        loss = _loss_from(out)
                    if loss is not None:
                        rec.phase = "backward"
                        loss.backward()
                else:
                    with torch.no_grad():
                        out = _call(model, specs, inputs)
        except BaseException as exc:  # noqa: BLE001 - reported with the op where it happened
            if isinstance(exc, KeyboardInterrupt):
                raise
            err = {"type": type(exc).__name__, "message": str(exc).splitlines()[0][:500] if str(exc) else "",
                   "op": rec.error_op, "line": rec.error_line}
    return {"records": rec.result(), "error": err, "seconds": time.perf_counter() - t0,
            "inputs": [s.text() for s in specs]}


def _call(model, specs, inputs):
    if len(inputs) == 1:
        return model(inputs[0])
    return model(**{s.name: t for s, t in zip(specs, inputs)})


def prepare(model, device: str, train: bool):
    if device == "meta":
        model = model.to("meta")
    if hasattr(model, "eval") and not train:
        model.eval()
    return model
