"""Python-level patches both modes need: CUDA absent on a CUDA build of torch, torch.compile eager, and the
bookkeeping behind the exit events (op counts, the devices parameters ended on, host-sync totals)."""

from __future__ import annotations

import functools
import itertools
import warnings
import weakref

import torch

from ascendify.run import common, events, policy

_built: "weakref.WeakSet" = weakref.WeakSet()
# every module moved with .to()/.npu()/.cuda()/_apply(): key -> [weakref, {device: n} of its own parameters
# after its last move]; a module freed before exit (a model local to a function) still counts
_moves: dict = {}
_next_key = itertools.count()
_NO_CUDA = "Torch not compiled with CUDA enabled"


def _cuda_absent() -> None:
    """A CUDA build behaves as torch's CPU wheel (the one torch_npu runs on): no device, the CPU wheel's
    errors.  On a CPU build nothing needs changing."""
    if torch.version.cuda is None and not torch.cuda.is_available():
        return
    cuda = torch.cuda

    def _lazy_init():
        raise AssertionError(_NO_CUDA)

    cuda.is_available = lambda: False
    cuda.device_count = lambda: 0
    cuda._lazy_init = _lazy_init
    cuda.is_initialized = lambda: False
    for name in ("set_device", "current_device", "synchronize", "get_device_name", "get_device_properties",
                 "get_device_capability", "mem_get_info", "manual_seed"):
        if hasattr(cuda, name):
            setattr(cuda, name, lambda *a, **k: _lazy_init())
    cuda.manual_seed_all = lambda seed: None
    try:
        torch.backends.cudnn.is_available = lambda: False
    except AttributeError:
        pass
    import torch.distributed as dist

    if dist.is_available():
        dist.is_nccl_available = lambda: False
        orig = dist.init_process_group

        @functools.wraps(orig)
        def init_process_group(backend=None, *a, **k):
            if backend is not None and "nccl" in str(backend).lower():
                raise RuntimeError("Distributed package doesn't have NCCL built in")
            return orig(backend, *a, **k)

        dist.init_process_group = init_process_group


def _compile_eager() -> None:
    orig = torch.compile

    @functools.wraps(orig)
    def compile(model=None, *args, **kwargs):  # noqa: A001
        warnings.warn("torch.compile is not emulated by ascendify run (on Ascend it needs torchair / "
                      "Triton-Ascend): running eagerly", UserWarning, stacklevel=2)
        if model is None:
            return lambda m: m
        return model

    torch.compile = compile


def _track_modules() -> None:
    Module = torch.nn.Module
    orig_apply = Module._apply
    orig_init = Module.__init__

    def _apply(self, fn, *args, **kwargs):
        try:
            return orig_apply(self, fn, *args, **kwargs)
        finally:
            _snapshot(self)

    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        try:
            _built.add(self)
        except TypeError:
            pass

    Module._apply = _apply
    Module.__init__ = __init__


def _param_map(m) -> dict:
    return {id(p): str(p.device) for p in m.parameters()}


def _snapshot(m) -> None:
    try:
        key = m.__dict__.get("_ascendify_run_key")
        if key is None:
            key = next(_next_key)
            object.__setattr__(m, "_ascendify_run_key", key)
        _moves[key] = [weakref.ref(m), _param_map(m)]
    except Exception:  # noqa: BLE001 - bookkeeping must never break the program
        pass


def param_devices() -> dict:
    """Parameters by device (each counted once): of the moved modules (live ones as they are now, freed ones
    as after their last move), else of the live constructed ones."""
    where: dict = {}
    if _moves:
        for key in sorted(_moves):
            ref, pmap = _moves[key]
            m = ref()
            where.update(pmap if m is None else _param_map(m))
    else:
        for m in list(_built):
            try:
                where.update(_param_map(m))
            except Exception:  # noqa: BLE001
                continue
    out: dict = {}
    for d in where.values():
        out[d] = out.get(d, 0) + 1
    return out


def exit_events() -> None:
    import sys

    sb = sys.modules.get("ascendify.run.shim_backend")
    if sb is not None:
        sb.merge_fast_counts()
    by_class, by_op = policy.counts()
    events.emit("op", counts_by_class=by_class, counts_by_op=by_op)
    common.host_sync_totals()
    events.emit("device_summary", param_devices=param_devices(),
                source="moved modules" if _moves else "constructed modules")


def _quiet(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        policy.S.quiet += 1
        try:
            return fn(*args, **kwargs)
        finally:
            policy.S.quiet -= 1
    return wrapper


def _backward_frame() -> None:
    orig = torch.autograd.backward

    @functools.wraps(orig)
    def backward(*args, **kwargs):
        fr = events.fast_user_frame(2)
        events.BACKWARD[:] = [dict(fr, function=fr["function"] + " (backward)")] if fr else []
        try:
            return orig(*args, **kwargs)
        finally:
            events.BACKWARD[:] = []

    torch.autograd.backward = backward


def install(mode: str, npu_module) -> None:
    # printing a tensor runs ops (and a float64 copy) that are no finding of the program
    import torch._tensor_str as ts

    ts._str = _quiet(ts._str)
    torch.Tensor.__format__ = _quiet(torch.Tensor.__format__)
    _backward_frame()
    _cuda_absent()
    _compile_eager()
    _track_modules()
