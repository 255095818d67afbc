"""Pieces both modes share: the op sets that get special treatment, RNG for ops without a generator
argument, host-sync accounting, and the fused (one-op) kernels for the composites torch_npu registers."""

from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, List

import torch

from ascendify.run import device as D
from ascendify.run import events, policy

aten = torch.ops.aten

# ops that accept a cpu tensor beside npu tensors on a device (indices, lengths, batch sizes)
CPU_OK_NAMES = ("index.Tensor", "index_put_", "index_put", "_index_put_impl_", "copy_", "_to_copy",
                "_pack_padded_sequence", "_pad_packed_sequence", "lstm.data", "gru.data", "rnn_tanh.data",
                "rnn_relu.data", "_copy_from", "_copy_from_and_resize", "set_.source_Tensor")
# complex/float64 on the npu: checked against the KB
BAD_DTYPES = frozenset({torch.float64, torch.complex64, torch.complex128, torch.complex32})
# random ops without a generator argument: they draw from the device generator of their tensor
NO_GENERATOR_RANDOM = frozenset({"native_dropout", "rand", "randn", "randint", "randperm", "rand_like", "randn_like",
                                 "randint_like", "rrelu", "rrelu_", "dropout", "feature_dropout", "alpha_dropout"})
# ops torch's GradScaler runs on a float64 1-element tensor (torch/amp/grad_scaler.py _unscale_grads_:
# self._scale.double().reciprocal().float()): the shim's C++ fast path reports a dtype once per op and cannot tell
# torch's call from the program's, so these go the Python path, where policy.in_torch_scaler() can
SCALER_FLOAT64 = frozenset({"reciprocal"})
# composite ops with an NPU kernel that the emulator still lets decompose (the pieces are NPU kernels and the
# result is the same; out= / in-place / name variants cannot be one autograd op)
FUSE_SKIP = frozenset({"contiguous", "matmul", "where", "softmax.int", "isfinite", "argsort", "argsort.stable",
                       "__ior__.Scalar", "__ior__.Tensor", "fill_diagonal_", "flatten_dense_tensors",
                       "_pad_packed_sequence", "repeat_interleave.self_Tensor", "repeat_interleave.self_int",
                       "one_hot", "isclose"})


def overload(key: str):
    base, _, ov = key.partition(".")
    pkt = getattr(aten, base, None)
    if pkt is None:
        return None
    try:
        return getattr(pkt, ov or "default")
    except AttributeError:
        return None


def op_set(names) -> frozenset:
    return frozenset(op for op in (overload(n) for n in names) if op is not None)


def with_device_rng(func, idx: int, call: Callable[[], Any]):
    """Run ``call`` (a CPU kernel of an op that has no generator argument) drawing from npu:idx's generator."""
    cpu = torch.default_generator
    dev = D.generator(idx)
    if dev is cpu:  # --cpu-rng: one stream
        return call()
    saved = cpu.get_state()
    cpu.set_state(dev.get_state())
    try:
        return call()
    finally:
        dev.set_state(cpu.get_state())
        cpu.set_state(saved)


class HostSyncs:
    counts: Dict[Any, List] = {}


def host_sync(what: str = "aten::_local_scalar_dense") -> None:
    if policy.S.quiet:
        return
    f = events.user_code_frame(2)
    key = (f.f_code, f.f_lineno) if f is not None else None
    e = HostSyncs.counts.get(key)
    if e is not None:
        e[1] += 1
        return
    fr = events.fast_user_frame(2)
    HostSyncs.counts[key] = [fr, 1]
    events.emit("host_sync", what=what, user_frame=fr, count=1)


def host_sync_totals() -> None:
    for fr, n in HostSyncs.counts.values():
        if n > 1:
            events.emit("host_sync", what="aten::_local_scalar_dense", user_frame=fr, count=n, total=True)


# ------------------------------------------------------------------------------------------- fused composites
class Ops:
    """The backend functions the fused kernels need (set by the active mode)."""

    is_npu: Callable[[torch.Tensor], bool]
    to_cpu: Callable[[torch.Tensor], torch.Tensor]
    from_cpu: Callable[[torch.Tensor, int], torch.Tensor]
    idx_of: Callable[[torch.Tensor], int]


def _flatten(args, out: list) -> None:
    for a in args:
        if isinstance(a, torch.Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            _flatten(a, out)


def _rebuild(args, it):
    res = []
    for a in args:
        if isinstance(a, torch.Tensor):
            res.append(next(it))
        elif isinstance(a, (list, tuple)):
            res.append(type(a)(_rebuild(a, it)))
        else:
            res.append(a)
    return res


class _Fused(torch.autograd.Function):
    """One op as one black box: forward runs the CPU composite on CPU copies of the npu inputs (with its own
    autograd graph), backward differentiates that graph."""

    @staticmethod
    def forward(ctx, op, args, kwargs, idx, *tensors):
        inner, grad_in = [], []
        for t in tensors:
            if Ops.is_npu(t):
                c = Ops.to_cpu(t).detach()
                if t.requires_grad and (c.is_floating_point() or c.is_complex()):
                    c.requires_grad_(True)
                    grad_in.append(c)
                inner.append(c)
            else:
                inner.append(t)
        cargs = _rebuild(args, iter(inner))
        with torch.enable_grad():
            out = op(*cargs, **kwargs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        ctx.grad_in = grad_in
        ctx.outs = outs
        ctx.grad_pos = [i for i, t in enumerate(tensors) if Ops.is_npu(t) and t.requires_grad
                        and (t.is_floating_point() or t.is_complex())]
        ctx.n = len(tensors)
        ctx.idx = idx
        res = tuple(Ops.from_cpu(o.detach(), idx) if isinstance(o, torch.Tensor) else o for o in outs)
        for r, o in zip(res, outs):
            if isinstance(o, torch.Tensor) and not o.requires_grad:
                ctx.mark_non_differentiable(r)
        return res if isinstance(out, (tuple, list)) else res[0]

    @staticmethod
    def backward(ctx, *grads):
        pairs = [(o, Ops.to_cpu(g) if Ops.is_npu(g) else g) for o, g in zip(ctx.outs, grads)
                 if isinstance(o, torch.Tensor) and o.requires_grad and g is not None]
        res: List[Any] = [None] * ctx.n
        if pairs and ctx.grad_in:
            gi = torch.autograd.grad([p[0] for p in pairs], ctx.grad_in, [p[1] for p in pairs], allow_unused=True)
            for pos, g in zip(ctx.grad_pos, gi):
                res[pos] = None if g is None else Ops.from_cpu(g, ctx.idx)
        return (None, None, None, None, *res)


def _fused_kernel(op, pol):
    def kernel(*args, **kwargs):
        tensors: list = []
        _flatten(args, tensors)
        idx = -1
        for t in tensors:
            if Ops.is_npu(t):
                i = Ops.idx_of(t)
                if idx == -1:
                    idx = i
                elif i != idx:
                    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                                       f"devices, npu:{idx} and npu:{i}!")
            elif t.dim() != 0 and op not in _CPU_OK_FUSED:
                raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, "
                                   f"npu:{D.index_of(None)} and cpu!")
        if idx == -1:
            with torch._C._AutoDispatchBelowAutograd():
                return op(*args, **kwargs)
        pol.n += 1
        if not policy.S.quiet:
            bad = next((t.dtype for t in tensors if t.dtype in BAD_DTYPES), None)
            if bad is not None:
                policy.on_dtype(pol, bad)
        return _Fused.apply(op, args, kwargs, idx, *tensors)

    return kernel


_CPU_OK_FUSED: frozenset = frozenset()
_libs: list = []


def install_fused(release) -> int:
    """AutogradPrivateUse1 kernels for the CompositeImplicit ops torch_npu registers a kernel for
    (SDPA, LSTM/GRU, …): they run as one op, so they are judged as that op, never as their pieces."""
    global _CPU_OK_FUSED
    _CPU_OK_FUSED = op_set(("lstm.data", "gru.data"))
    lib = torch.library.Library("aten", "IMPL")
    _libs.append(lib)
    n = 0
    for key, (cls, _impl, disp) in release.ops.items():
        if cls not in ("npu_kernel", "npu_via_structured_out") or "CompositeImplicitAutograd" not in disp:
            continue
        if key in FUSE_SKIP or key.endswith("out") or key.split(".")[0].endswith("_") or "names" in key \
                or "dimname" in key.lower():
            continue
        op = overload(key)
        if op is None:
            continue
        if any(r.alias_info is not None for r in op._schema.returns):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.impl(key, _fused_kernel(op, policy.policy(op)), "AutogradPrivateUse1")
        n += 1
    return n
