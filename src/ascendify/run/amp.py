"""``torch.autocast("npu")``: AutocastPrivateUse1 kernels, plus the autocast / GradScaler events.

torch_npu registers its own autocast op lists (torch_npu/csrc/aten/autocast_mode.cpp); the op KB does not
hold them, so the lists below are CUDA's, from torch's ``aten/src/ATen/autocast_mode.cpp``
(``TORCH_LIBRARY_IMPL(aten, Autocast, m)``: lower_precision_fp, fp32, fp32_set_opt_dtype, promote) -- torch_npu's
lists were derived from the same file, but differences are not modelled (docs/run.md says so).
"""

from __future__ import annotations

import os
import sys
import warnings

import torch
from torch._C import DispatchKey, DispatchKeySet

from ascendify.run import common, events, policy

aten = torch.ops.aten
LISTS_SOURCE = "CUDA's autocast op lists (torch aten/src/ATen/autocast_mode.cpp); the KB has no torch_npu lists"
_EXCLUDE = DispatchKeySet(DispatchKey.AutocastPrivateUse1)
_libs: list = []

LOWER = ["_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d.input",
         "conv_transpose3d.input", "convolution", "prelu", "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv",
         "linalg_vecdot", "linear", "addbmm", "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot",
         "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
         "_scaled_dot_product_flash_attention", "scaled_dot_product_attention"]
FP32 = ["acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
        "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar", "softplus", "layer_norm",
        "native_layer_norm", "group_norm", "frobenius_norm.dim", "nuclear_norm", "nuclear_norm.dim",
        "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
        "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
        "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
        "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm", "logsumexp",
        "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "upsample_linear1d",
        "upsample_bilinear2d", "upsample_trilinear3d", "upsample_bicubic2d", "norm.Scalar", "norm.ScalarOpt_dim"]
FP32_SET_OPT_DTYPE = ["prod", "prod.dim_int", "softmax.int", "log_softmax.int", "cumprod", "cumsum",
                      "linalg_vector_norm", "linalg_matrix_norm", "sum", "sum.dim_IntList"]
PROMOTE = ["addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sampler", "index_put", "scatter_add",
           "tensordot", "stack", "cat"]
_FLOATS = (torch.float16, torch.bfloat16, torch.float32)


def _eligible(t) -> bool:
    return isinstance(t, torch.Tensor) and t.dtype in _FLOATS and common.Ops.is_npu(t)


def _cast(a, dt):
    if isinstance(a, torch.Tensor):
        return a.to(dt) if _eligible(a) and a.dtype != dt else a
    if isinstance(a, (list, tuple)):
        return type(a)(_cast(x, dt) for x in a)
    return a


def _kernel(op, kind):
    names = [a.name for a in op._schema.arguments]
    dtype_pos = names.index("dtype") if "dtype" in names else -1

    def kernel(*args, **kwargs):
        with torch._C._ExcludeDispatchKeyGuard(_EXCLUDE):
            if kind == "lower":
                return op(*_cast(args, torch.get_autocast_dtype("npu")), **kwargs)
            if kind == "fp32":
                return op(*_cast(args, torch.float32), **kwargs)
            if kind == "fp32_opt":
                ts: list = []
                common._flatten(args, ts)
                if dtype_pos >= 0 and any(_eligible(t) and t.dtype != torch.float32 for t in ts):
                    if dtype_pos < len(args):
                        if args[dtype_pos] is None:
                            args = args[:dtype_pos] + (torch.float32,) + args[dtype_pos + 1:]
                    elif kwargs.get("dtype") is None:
                        kwargs = dict(kwargs, dtype=torch.float32)
                return op(*args, **kwargs)
            ts = []
            common._flatten(args, ts)
            ts = [t for t in ts if _eligible(t)]
            if not ts:
                return op(*args, **kwargs)
            dt = torch.float32 if any(t.dtype == torch.float32 for t in ts) else ts[0].dtype
            return op(*_cast(args, dt), **kwargs)

    return kernel


def install() -> int:
    """AutocastPrivateUse1: a fallthrough for every op (torch core leaves that to the backend, as torch_npu
    does) and kernels for the listed ops."""
    fb = torch.library.Library("_", "IMPL")
    _libs.append(fb)
    fb.fallback(torch.library.fallthrough_kernel, "AutocastPrivateUse1")
    lib = torch.library.Library("aten", "IMPL")
    _libs.append(lib)
    n = 0
    for names, kind in ((LOWER, "lower"), (FP32, "fp32"), (FP32_SET_OPT_DTYPE, "fp32_opt"), (PROMOTE, "promote")):
        for name in names:
            op = common.overload(name)
            if op is None:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    lib.impl(name, _kernel(op, kind), "AutocastPrivateUse1")
                except RuntimeError:
                    continue
            n += 1
    _patch_events()
    return n


_TORCH_AUTOCAST_FILES = tuple(os.path.join("torch", *p) for p in (("amp", "autocast_mode.py"),
                              ("cuda", "amp", "autocast_mode.py"), ("cpu", "amp", "autocast_mode.py")))
MAX_SITES = 20  # autocast call sites recorded per (device, dtype, enabled, requested)
_seen_autocast: set = set()
_sites_per_group: dict = {}


class Scalers:
    """GradScaler activity of this process: constructions are events at once; step()/update() calls
    are counted and written at exit (one ``gradscaler`` event with event "counts")."""
    built = 0
    steps = 0
    updates = 0


def _autocast_event(self, requested) -> None:
    enabled = bool(self._enabled)
    asked = enabled if requested is None else bool(requested)
    fr = events.fast_user_frame(3)
    site = (fr["file"], fr["line"]) if fr else None
    group = (self.device, str(self.fast_dtype) if enabled else None, enabled, asked)
    key = group + (site,)
    if key in _seen_autocast:
        return
    n = _sites_per_group.get(group, 0)
    if n >= MAX_SITES:
        return
    _sites_per_group[group] = n + 1
    _seen_autocast.add(key)
    # requested and not enabled: torch switched autocast off itself (for "cuda": "CUDA is not available ...
    # Disabling autocast"; for another device: a dtype it does not autocast to)
    events.emit("autocast", device_type=self.device, dtype=group[1], disabled=not enabled,
                requested=asked, switched_off=asked and not enabled,
                reason=(None if enabled or not asked else
                        "cuda_unavailable" if self.device == "cuda" else "dtype_unsupported"),
                user_frame=fr)


def _patch_events() -> None:
    from torch.amp import autocast_mode

    cls = autocast_mode.autocast
    orig_init = cls.__init__
    orig_enter = cls.__enter__

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        # what the program asked for: torch's __init__ overwrites self._enabled when it switches AMP off
        self._ascendify_requested = bool(enabled)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            orig_init(self, device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
        # torch warns with stacklevel=2: re-issue at the frame that called autocast(), not at this wrapper
        f = sys._getframe(1)
        while f is not None and f.f_code.co_filename.endswith(_TORCH_AUTOCAST_FILES):
            f = f.f_back
        for w in caught:
            if f is None:
                warnings.warn(w.message, w.category)
            else:
                warnings.warn_explicit(w.message, w.category, f.f_code.co_filename, f.f_lineno,
                                       module=f.f_globals.get("__name__"), registry=f.f_globals.setdefault(
                                           "__warningregistry__", {}), module_globals=f.f_globals)

    def __enter__(self):
        r = orig_enter(self)
        try:
            _autocast_event(self, getattr(self, "_ascendify_requested", None))
        except Exception:  # noqa: BLE001 - never break the program for an event
            pass
        return r

    cls.__init__ = __init__
    cls.__enter__ = __enter__
    from torch.amp import grad_scaler

    gs = grad_scaler.GradScaler
    orig_update = gs.update
    orig_step = gs.step
    orig_gs_init = gs.__init__

    def gs_init(self, *args, **kwargs):
        orig_gs_init(self, *args, **kwargs)
        try:
            Scalers.built += 1
            requested = kwargs.get("enabled", args[5] if len(args) > 5 else True)
            if Scalers.built <= MAX_SITES:
                events.emit("gradscaler", event="init", device_type=getattr(self, "_device", None),
                            enabled=bool(self._enabled), requested=bool(requested),
                            init_scale=kwargs.get("init_scale", args[1] if len(args) > 1 else None),
                            user_frame=events.fast_user_frame(2))
        except Exception:  # noqa: BLE001
            pass

    def step(self, optimizer, *args, **kwargs):
        Scalers.steps += 1
        return orig_step(self, optimizer, *args, **kwargs)

    def update(self, new_scale=None):
        Scalers.updates += 1
        if not (self._enabled and self._device == "npu"):
            return orig_update(self, new_scale)
        policy.S.quiet += 1
        try:
            return _update(self, new_scale)
        finally:
            policy.S.quiet -= 1

    def _update(self, new_scale):
        before = self._scale.item() if getattr(self, "_scale", None) is not None and self._enabled else None
        found = None
        if before is not None:
            try:
                found = sum(float(v.item()) for st in self._per_optimizer_states.values()
                            for v in st["found_inf_per_device"].values())
            except Exception:  # noqa: BLE001
                found = None
        r = orig_update(self, new_scale)
        if before is not None and self._device == "npu":
            after = self._scale.item()
            if found:
                events.emit("gradscaler", event="skip", scale=before)
            if after < before:
                events.emit("gradscaler", event="backoff", scale=after)
            elif after > before:
                events.emit("gradscaler", event="grow", scale=after)
        return r

    gs.update = update
    gs.step = step
    gs.__init__ = gs_init

    def counts() -> None:
        if Scalers.built:
            events.emit("gradscaler", event="counts", constructed=Scalers.built, steps=Scalers.steps,
                        updates=Scalers.updates)

    events.on_exit(counts)
