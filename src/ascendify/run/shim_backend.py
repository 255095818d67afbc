"""Mode "shim": npu tensors are real PrivateUse1 tensors whose memory is host memory (shim/npu_shim.cpp).

Every op that reaches PrivateUse1 without a C++ kernel comes to :func:`run`: device checks, the KB policy
of the target release, then the CPU kernel on zero-copy CPU aliases; CPU results are adopted back as npu
tensors (no copies).  The ops the KB says torch_npu registers but that torch implements as a
CompositeExplicit kernel get a direct PrivateUse1 kernel here, so dispatch takes torch_npu's path and does
not decompose them."""

from __future__ import annotations

import warnings
from typing import Any, Dict

import torch

from ascendify.run import common, device as D, policy

aten = torch.ops.aten
_libs: list = []
_as_cpu = None
_adopt = None
_mem = None
_reset_peak = None
_PLANS: Dict[Any, "Plan"] = {}
_CPU = torch.device("cpu")
_CPU_OK: frozenset = frozenset()
_LOCAL_SCALAR = None
_BAD = common.BAD_DTYPES
RUN_FALLBACK = policy.FALLBACK


class Plan:
    """What run() needs to know about one op, worked out once."""

    __slots__ = ("func", "call", "pol", "has_gen", "mutates", "dev_rng", "cpu_ok", "sync", "fallback")

    def __init__(self, func):
        args = func._schema.arguments
        self.func = func
        self.call = func._op          # the C++ callable: one Python frame less than OpOverload.__call__
        self.pol = policy.policy(func)
        self.has_gen = any(a.name == "generator" for a in args)
        # only out= arguments (keyword-only, written) can be resized by the CPU kernel
        self.mutates = any(a.alias_info is not None and a.alias_info.is_write and a.kwarg_only for a in args)
        self.dev_rng = not self.has_gen and func._schema.name.split("::")[-1] in common.NO_GENERATOR_RANDOM
        self.cpu_ok = func in _CPU_OK
        self.sync = func is _LOCAL_SCALAR
        self.fallback = self.pol.action == RUN_FALLBACK


def plan(func) -> Plan:
    p = _PLANS.get(func)
    if p is None:
        p = _PLANS[func] = Plan(func)
    return p


def _same_device_error(a: str, b: str, func) -> RuntimeError:
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, {a} and "
                        f"{b}! (when checking argument for argument in method wrapper_NPU__{func._schema.name.split('::')[-1]})")


def run(func, args, kwargs, pl=None):
    if pl is None:
        pl = _PLANS.get(func) or plan(func)
    pol = pl.pol
    pol.n += 1
    idx = -1
    cpu_arg = False
    bad = None
    pairs = []
    uargs = []
    for a in args:
        if isinstance(a, torch.Tensor):
            i = a.get_device()
            if i >= 0:
                if i != idx:
                    if idx != -1:
                        raise _same_device_error(f"npu:{idx}", f"npu:{i}", func)
                    idx = i
                c = _as_cpu(a)
                if a.dtype in _BAD:
                    bad = a.dtype
                pairs.append((c, a))
                uargs.append(c)
                continue
            if a.dim() != 0:
                cpu_arg = True
        elif type(a) is list or type(a) is tuple:
            if any(isinstance(x, torch.Tensor) for x in a):
                lst = []
                for x in a:
                    if isinstance(x, torch.Tensor):
                        i = x.get_device()
                        if i >= 0:
                            if i != idx:
                                if idx != -1:
                                    raise _same_device_error(f"npu:{idx}", f"npu:{i}", func)
                                idx = i
                            c = _as_cpu(x)
                            if x.dtype in _BAD:
                                bad = x.dtype
                            pairs.append((c, x))
                            lst.append(c)
                            continue
                        if x.dim() != 0:
                            cpu_arg = True
                    lst.append(x)
                a = type(a)(lst)
        uargs.append(a)
    dev = None
    if kwargs:
        kw = {}
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                i = v.get_device()
                if i >= 0:
                    if idx != -1 and i != idx:
                        raise _same_device_error(f"npu:{idx}", f"npu:{i}", func)
                    idx = i
                    c = _as_cpu(v)
                    pairs.append((c, v))
                    v = c
            elif k == "device" and v is not None:
                dev = v
                if torch.device(v).type == "npu":
                    v = _CPU
            elif k == "pin_memory":
                v = None
            kw[k] = v
    else:
        kw = {}
    if idx == -1:
        idx = D.index_of(dev) if dev is not None and torch.device(dev).type == "npu" else D.S.backend.current_device()
    elif cpu_arg and not pl.cpu_ok:
        raise _same_device_error(f"npu:{idx}", "cpu", func)
    if pl.fallback:
        policy.on_fallback(pol, bad)
    elif bad is not None and pol.check_dtype:
        policy.on_dtype(pol, bad)
    if pl.sync:
        common.host_sync()
    if pl.has_gen and kw.get("generator") is None:
        kw["generator"] = D.S.gens[idx]
    mutates = pl.mutates
    if mutates:
        before = [(c, a, c.data_ptr(), c.shape) for c, a in pairs]
    if pl.dev_rng:
        out = common.with_device_rng(func, idx, lambda: func(*uargs, **kw))
    else:
        out = pl.call(*uargs, **kw)
    if mutates:
        for c, a, ptr, shp in before:
            if c.data_ptr() != ptr or c.shape != shp:  # an out= argument resized by the CPU kernel
                a.resize_(c.shape)
                _as_cpu(a).copy_(c)
    return _wrap(out, idx, pairs, dev)


def _wrap(out, idx, pairs, dev):
    if isinstance(out, torch.Tensor):
        for c, a in pairs:
            if out is c:
                return a
        if out.device.type != "cpu":
            return out
        if dev is not None and torch.device(dev).type == "cpu":
            return out
        if out.layout is not torch.strided:
            raise RuntimeError(f"Could not run an operator producing a {out.layout} tensor on the 'npu' backend "
                               "(torch_npu has no sparse kernels for it)")
        return _adopt(out, idx)
    if isinstance(out, (tuple, list)):
        return type(out)(_wrap(o, idx, pairs, dev) for o in out)
    return out


def _fallback(op, *args, **kwargs):
    return run(op, args, kwargs)


def _direct(op):
    pl: list = []

    def kernel(*args, **kwargs):
        if not pl:
            pl.append(plan(op))
        return run(op, args, kwargs, pl[0])
    return kernel


# C++ kernels (npu_shim.cpp) or torch's own composites that must stay (views share the Storage)
_SKIP_DIRECT = frozenset({"copy_", "_to_copy", "empty", "empty_strided", "as_strided", "view", "_reshape_alias",
                          "resize_", "set_", "_copy_from", "_copy_from_and_resize", "unfold", "view_as_real",
                          "view_as_complex", "_unsafe_view", "lift", "lift_fresh", "alias", "detach",
                          "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk", "_conj", "_neg_view",
                          "_make_dual", "_fw_primal", "values", "indices", "_values", "_indices",
                          "_has_compatible_shallow_copy_type", "record_stream",
                          # in-place metadata changes: torch's composite changes the npu tensor itself
                          "unsqueeze_", "squeeze_", "t_", "transpose_", "as_strided_", "swapdims_", "swapaxes_",
                          "resize_as_", "detach_", "requires_grad_", "_coalesced_", "fill_diagonal_"})


_DTYPES = {"Double": torch.float64, "ComplexFloat": torch.complex64, "ComplexDouble": torch.complex128,
           "ComplexHalf": torch.complex32}
_ext = None
_merged: Dict[Any, int] = {}


def _on_dtype(name: str, overload: str, dtype: str) -> None:
    """Called by the C++ fast path the first time an op meets a float64/complex tensor."""
    func = common.overload(name.split("::")[-1] + ("." + overload if overload else ""))
    if func is not None and dtype in _DTYPES:
        policy.on_dtype(policy.policy(func), _DTYPES[dtype])


def merge_fast_counts() -> None:
    """Add the calls counted by the C++ fast path to the per-op counts (idempotent)."""
    if _ext is None or not hasattr(_ext, "fast_counts"):
        return
    for name, ov, n in _ext.fast_counts():
        func = common.overload(name.split("::")[-1] + ("." + ov if ov else ""))
        if func is None:
            continue
        pol = policy.policy(func)
        pol.n += n - _merged.get(func, 0)
        _merged[func] = n


_NOT_FAST_TYPES = ("Generator", "Device", "Layout", "Tensor?[]", "Storage", "Stream", "Dimname", "ScalarType?")


def fast_ops(release) -> "list[str]":
    """The KB's NPU-kernel ops the C++ fast path can judge alone: no generator, device, out= or view, no cpu
    tensor allowed beside npu ones, not a host sync, not a composite torch_npu replaces above autograd."""
    names = []
    for key, (cls, _impl, disp) in release.ops.items():
        if cls not in ("npu_kernel", "npu_via_structured_out") or "CompositeImplicitAutograd" in disp:
            continue
        base = key.split(".")[0]
        if (base in _SKIP_DIRECT or base in common.NO_GENERATOR_RANDOM or base == "_local_scalar_dense"
                or base in common.SCALER_FLOAT64):
            continue
        op = common.overload(key)
        if op is None or op in _CPU_OK:
            continue
        sch = op._schema
        if any(r.alias_info is not None and not r.alias_info.is_write for r in sch.returns):
            continue
        if any(any(t in str(a.type) for t in _NOT_FAST_TYPES) or a.name == "generator"
               or (a.alias_info is not None and a.alias_info.is_write and a.kwarg_only) for a in sch.arguments):
            continue
        names.append(key)
    return names


class ShimBackend(D.Backend):
    def current_device(self) -> int:
        return torch._C._accelerator_getDeviceIndex()

    def set_device(self, idx: int) -> None:
        torch._C._accelerator_setDeviceIndex(idx)

    def mem_stats(self, idx: int):
        return tuple(_mem(idx))

    def reset_peak(self, idx: int) -> None:
        _reset_peak(idx)


def install(release, count: int, capacity: int) -> int:
    """Load the shim and register the Python side; returns the number of direct kernels."""
    global _as_cpu, _adopt, _mem, _reset_peak, _CPU_OK, _LOCAL_SCALAR, _ext
    import os

    from ascendify.run import shim

    ext = _ext = shim.load_library()
    ext.configure(count, capacity)
    _as_cpu, _adopt, _mem, _reset_peak = ext.as_cpu, ext.adopt, ext.mem_stats, ext.reset_peak
    _CPU_OK = common.op_set(common.CPU_OK_NAMES)
    _LOCAL_SCALAR = aten._local_scalar_dense.default
    common.Ops.is_npu = lambda t: t.device.type == "npu"
    common.Ops.to_cpu = _as_cpu
    common.Ops.from_cpu = _adopt
    common.Ops.idx_of = lambda t: t.get_device()
    fb = torch.library.Library("_", "IMPL")
    _libs.append(fb)
    fb.fallback(_fallback, "PrivateUse1")
    fast = set(fast_ops(release)) if os.environ.get("ASCENDIFY_RUN_FAST", "1") != "0" else set()
    if fast:
        ext.register_fast(sorted(fast), _on_dtype)
    lib = torch.library.Library("aten", "IMPL")
    _libs.append(lib)
    n = len(fast)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, (cls, _impl, disp) in release.ops.items():
            # torch's CompositeExplicit kernels and the CompositeExplicitAutogradNonFunctional wrappers of
            # structured ops (functional -> .out) would run before the fallback: torch_npu's kernel wins
            if cls not in ("npu_kernel", "npu_via_structured_out") or not (
                    "CompositeExplicit" in disp or disp.startswith("structured_delegate")):
                continue
            if key.split(".")[0] in _SKIP_DIRECT or key in fast:
                continue
            op = common.overload(key)
            # views keep torch's composite (they must share the Storage); in-place ops return self (a!)
            if op is None or any(r.alias_info is not None and not r.alias_info.is_write for r in op._schema.returns):
                continue
            try:
                lib.impl(key, _direct(op), "PrivateUse1")
                n += 1
            except RuntimeError:
                pass
        # torch_npu (like OpenReg) says npu and cpu tensors share a TensorImpl type, so Module.to() assigns
        # param.data and tied weights stay tied
        lib.impl("_has_compatible_shallow_copy_type",
                 lambda a, b: a.layout == b.layout == torch.strided and {a.device.type, b.device.type} <= {"cpu", "npu"},
                 "PrivateUse1")
    return n
