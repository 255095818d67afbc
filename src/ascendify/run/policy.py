"""How each op on an npu tensor runs under the target torch_npu release, from the op KB
(``ascendify.kb.ops``), decided once per OpOverload and cached.

Texts reproduced from torch_npu (sources):
* the CPU-fallback warning, printed once per op: the text torch_npu's boxed PrivateUse1 fallback
  (``torch_npu/csrc/aten/VariableFallbackKernel.cpp``, ``npu_cpu_fallback``) prints, as recorded in the op KB
  (``hardcoded_fallback_messages`` of every release table, e.g. for ``aten::_fused_adam_``) and as it appears
  in user logs (``[W… VariableFallbackKernel.cpp:250] Warning: CAUTION: The operator
  'aten::bitwise_left_shift.Tensor_out' is not currently supported on the NPU backend and will fall back to
  run on the CPU. This may have performance implications. (function npu_cpu_fallback)``).  Non-aten ops take
  the same path (logged for ``'torchaudio::forced_align'``).
* the error with ``TORCH_NPU_FALLBACK_CPU_DISABLE=1``: torch_npu's ``CheckCpuFallbackAllowed``
  ("The operator '…' would execute its main computation on CPU through dispatcher backend fallback, but CPU
  fallback is disabled by TORCH_NPU_FALLBACK_CPU_DISABLE=1." + ``OPS_ERROR(ErrCode::NOT_SUPPORT)``), Ascend/pytorch
  master 2026 (found by code search; the file path in that tree is not verified, and releases before that
  change word the error differently).  The switch itself: Ascend/pytorch docs
  ``environment_variable_reference/op_execution/TORCH_NPU_FALLBACK_CPU_DISABLE.md``.
* float64: the torch_npu native-API support lists in the KB (``ascendify.kb.apis``): an op reached by an API
  whose documented dtype list lacks float64 warns (AI_CPU, a CPU fallback or an aclnn dtype error are what
  a card does with it); undocumented ones are counted, not warned.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any, Dict, Optional

from ascendify.run import events

RUN, FALLBACK, FUSED = 0, 1, 2
FALLBACK_CLASSES = frozenset({"cpu_fallback", "not_dense"})
# ops that move or alias data: no dtype finding for them (a float64 tensor moved to the npu is found by the
# op that computes on it)
_NO_DTYPE_CHECK = frozenset({
    "_to_copy", "copy_", "_copy_from", "_copy_from_and_resize", "clone", "detach", "alias", "view", "_unsafe_view",
    "as_strided", "expand", "t", "transpose", "permute", "slice", "select", "unsqueeze", "squeeze", "reshape",
    "_reshape_alias", "unbind", "split", "split_with_sizes", "narrow", "empty_like", "empty", "empty_strided",
    "_local_scalar_dense", "lift_fresh", "zero_", "fill_", "new_empty", "new_empty_strided", "new_zeros",
    "resize_", "set_", "equal", "is_nonzero", "is_same_size", "_has_compatible_shallow_copy_type", "record_stream",
    "is_pinned", "_pin_memory", "contiguous", "index", "index_put_", "_index_put_impl_", "cat", "stack"})


class Policy:
    __slots__ = ("name", "key", "cls", "action", "check_dtype", "n")

    def __init__(self, name: str, key: str, cls: str, action: int, check_dtype: bool):
        self.name = name        # "aten::add.Tensor" / "torchvision::nms"
        self.key = key          # KB key: "add.Tensor"
        self.cls = cls          # KB class
        self.action = action
        self.check_dtype = check_dtype
        self.n = 0              # calls


class _State:
    release = None          # ascendify.kb.ops.Release
    fallback_disabled = False
    warned: set = set()
    fp64: Dict[str, tuple] = {}
    quiet = 0               # >0: printing tensors and emulator internals (no findings)


S = _State()
_POLICIES: Dict[Any, Policy] = {}


def configure(release, fallback_disabled: bool) -> None:
    S.release = release
    S.fallback_disabled = fallback_disabled


def kb_key(func) -> str:
    n = func._schema.name.split("::", 1)[-1]
    ov = func._overloadname
    return n if ov == "default" else f"{n}.{ov}"


def policy(func) -> Policy:
    p = _POLICIES.get(func)
    if p is None:
        p = _POLICIES[func] = _make(func)
    return p


def _make(func) -> Policy:
    ns = func.namespace
    key = kb_key(func)
    if ns != "aten":
        # a non-aten op without a PrivateUse1 kernel reaches torch_npu's boxed fallback like an aten one
        name = f"{ns}::{key}"
        return Policy(name, name, "cpu_fallback", FALLBACK, False)
    cls = S.release.ops.get(key, ("unknown",))[0] if S.release is not None else "unknown"
    action = FALLBACK if cls in FALLBACK_CLASSES else RUN
    return Policy("aten::" + key, key, cls, action, key.split(".")[0] not in _NO_DTYPE_CHECK)


def note_call(func) -> None:
    """Count a call that the emulator handles without the generic path (fused ops, special kernels)."""
    policy(func).n += 1


def counts() -> "tuple[dict, dict]":
    by_class: Dict[str, int] = {}
    by_op: Dict[str, int] = {}
    for p in _POLICIES.values():
        if p.n:
            by_class[p.cls] = by_class.get(p.cls, 0) + p.n
            by_op[p.name] = by_op.get(p.name, 0) + p.n
    return by_class, dict(sorted(by_op.items(), key=lambda kv: -kv[1]))


def _warn_at_user_frame(msg: str, category=UserWarning) -> None:
    fr = events.fast_user_frame(3)
    if fr is not None:
        warnings.warn_explicit(msg, category, fr["file"], fr["line"] or 0, module="ascendify_run",
                               registry={})
    else:
        warnings.warn(msg, category, stacklevel=4)


def fallback_text(pol: Policy) -> str:
    return (f"CAUTION: The operator '{pol.name}' is not currently supported on the NPU backend and will fall back "
            f"to run on the CPU. This may have performance implications.")


def disabled_text(pol: Policy) -> str:
    return (f"The operator '{pol.name}' would execute its main computation on CPU through dispatcher backend "
            f"fallback, but CPU fallback is disabled by TORCH_NPU_FALLBACK_CPU_DISABLE=1.\n"
            f"[ERROR] (PID:{os.getpid()}, Device:0, RankID:-1) ERR01007 OPS feature not supported")


def on_fallback(pol: Policy, dtype=None) -> None:
    """torch_npu's CPU fallback: warn once per op (or raise when disabled); record the finding."""
    if S.quiet:
        return
    first = pol.name not in S.warned
    if first:
        S.warned.add(pol.name)
        events.emit("fallback", op=pol.name, kb_class=pol.cls, dtype=None if dtype is None else str(dtype),
                    user_frame=events.fast_user_frame(2), stack=events.stack_frames(1),
                    disabled=S.fallback_disabled)
    if S.fallback_disabled:
        raise RuntimeError(disabled_text(pol))
    if first:
        _warn_at_user_frame(fallback_text(pol))


def fp64_verdict(key: str) -> "tuple[str, list]":
    """('listed', apis) / ('missing', apis) / ('undocumented', []) for float64 on aten op ``key``."""
    v = S.fp64.get(key)
    if v is not None:
        return v
    try:
        from ascendify.kb import apis as kbapis

        d = kbapis._notes()
        rev: Dict[str, list] = S.fp64.setdefault("__rev__", {})  # type: ignore[assignment]
        if not rev:
            for api, ops in d.get("aten", {}).items():
                for op in ops:
                    rev.setdefault(op, []).append(api)
        base = key.split(".")[0]
        cands = rev.get(key, []) + rev.get(base, [])
        bare = base.rstrip("_")
        cands += [a for a in (f"torch.{bare}", f"Tensor.{bare}", f"torch.nn.functional.{bare}") if a in d["apis"]]
        lists = []
        for api in dict.fromkeys(cands):
            for row in kbapis.api_notes(api, S.release.torch if S.release is not None else "2.7.1"):
                if row.get("listed") and row.get("dtypes"):
                    lists.append((api, row["dtypes"]))
        if any("float64" in dts for _, dts in lists):
            v = ("listed", [a for a, dts in lists if "float64" in dts])
        elif lists:
            v = ("missing", sorted({a for a, _ in lists}))
        else:
            v = ("undocumented", [])
    except Exception:  # noqa: BLE001 - the docs part of the KB is optional
        v = ("undocumented", [])
    S.fp64[key] = v
    return v


_SCALER_FILES = (os.sep + os.path.join("torch", "amp", "grad_scaler.py"),
                 os.sep + os.path.join("torch", "cuda", "amp", "grad_scaler.py"))
_ASCENDIFY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def in_torch_scaler() -> bool:
    """Whether the innermost Python frame outside ascendify is torch's own GradScaler (torch/amp/grad_scaler.py:
    ``_unscale_grads_`` computes ``self._scale.double().reciprocal().float()``, a float64 op on a 1-element
    tensor in every fp16 step). Whether torch_npu's scaler path runs that float64 op on the card is unverified."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_ASCENDIFY_DIR):
        f = f.f_back
    return f is not None and f.f_code.co_filename.endswith(_SCALER_FILES)


def on_dtype(pol: Policy, dtype) -> None:
    """A float64 / complex tensor reached an op on the npu: warn once per (op, dtype) as the KB says."""
    if S.quiet or not pol.check_dtype:
        return
    tag = (pol.name, str(dtype))
    if tag in S.warned:
        return
    if in_torch_scaler():
        return  # GradScaler's own float64 (its 1-element scale's reciprocal), not the program's; not remembered
    S.warned.add(tag)
    import torch

    if dtype is torch.float64:
        if pol.action == FALLBACK:
            return  # the fallback warning says it already
        verdict, apis = fp64_verdict(pol.key)
        if verdict != "missing":
            return
        msg = (f"{pol.name} runs on float64, which the torch_npu {S.release.torch_npu} native-API list does not "
               f"give for {', '.join(apis[:3])}: on a card expect AI_CPU (slow), a CPU fallback or a dtype error; "
               f"cast to float32 [ascendify run]")
    else:
        msg = (f"{pol.name} runs on {str(dtype).replace('torch.', '')}: complex dtypes mostly run on AI_CPU or are "
               f"not supported by the NPU kernels [ascendify run]")
    events.emit("dtype", op=pol.name, dtype=str(dtype), action="warn", user_frame=events.fast_user_frame(2))
    _warn_at_user_frame(msg)


def release_name() -> Optional[str]:
    return S.release.torch_npu if S.release is not None else None
