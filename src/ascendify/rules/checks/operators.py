"""Operator rules (OPS): torch / Tensor calls checked against the versioned operator KB.

The release is ``ctx.settings.torch_npu`` (nearest known KB release), the chip
``ctx.settings.chip``.  Static name sets are built at import; per-release maps
(API → CPU-fallback aten ops, doc flags) are built once per release and cached,
so a check is a few dict lookups per call node.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import Optional

from ascendify.kb import apis as kbapis
from ascendify.kb import ops as kbops
from ascendify.kb.apimap import api_fallbacks, needs_kwarg
from ascendify.rules.checks._util import kwarg
from ascendify.rules.registry import check, last_parts as _last_parts

# Method names that non-tensor objects commonly have (pandas .mode(), matplotlib .scatter(),
# numpy/scipy .lu()/.det()): reported only when the receiver is visibly a torch tensor.
AMBIGUOUS_METHODS = frozenset({"mode", "scatter", "scatter_", "histogram", "lu", "det", "frexp", "copysign",
                               "std", "var", "trunc", "round", "sort", "normal_", "index_put_", "logdet",
                               "cholesky", "solve", "inverse", "bmm", "to_dense"})
INSTANCE_NORM = frozenset({"torch.nn.functional.instance_norm", "torch.instance_norm", "torch.nn.InstanceNorm1d",
                           "torch.nn.InstanceNorm2d", "torch.nn.InstanceNorm3d", "torch.nn.modules.instancenorm.InstanceNorm2d"})
BMM = frozenset({"torch.bmm"})
SPARSE_CTORS = frozenset({"torch.sparse_coo_tensor", "torch.sparse_csr_tensor", "torch.sparse_csc_tensor",
                          "torch.sparse_bsr_tensor", "torch.sparse_bsc_tensor", "torch.sparse_compressed_tensor",
                          "torch.sspaddmm", "torch.smm", "torch.hspmm"})
SPARSE_METHODS = frozenset({"to_sparse", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc",
                            "to_sparse_coo", "sparse_mask", "sparse_resize_", "coalesce"})
SPARSE_LAYOUTS = frozenset({"torch.sparse_coo", "torch.sparse_csr", "torch.sparse_csc", "torch.sparse_bsr", "torch.sparse_bsc"})
EMBEDDINGS = frozenset({"torch.nn.Embedding", "torch.nn.EmbeddingBag", "torch.nn.functional.embedding",
                        "torch.nn.functional.embedding_bag"})
_DEPRECATED_BASES = None


def _deprecated_bases() -> dict:
    global _DEPRECATED_BASES
    if _DEPRECATED_BASES is None:
        d = {}
        for name, ent in kbapis.deprecated_table()["deprecated"].items():
            d.setdefault(name.split(".")[0], (name, ent))
        _DEPRECATED_BASES = d
    return _DEPRECATED_BASES


@lru_cache(maxsize=8)
def _release(torch_npu: str) -> str:
    try:
        return kbops.resolve_release(torch_npu)[0]
    except ValueError:
        return kbops.resolve_release(None)[0]


@lru_cache(maxsize=8)
def _doc_flags(release: str) -> dict:
    """API → (may_fallback, unsupported, dtypes, hardware, doc ids) for the release's torch version."""
    torch_v = kbops.load_release(release).torch
    ids, _ = kbapis.doc_for_torch(torch_v)
    notes = kbapis._notes()
    out = {}
    for api, per in notes["apis"].items():
        rows = [(did, per[did]) for did in ids if did in per]
        if not rows:
            continue
        fb = any(r[2] for _, r in rows)
        unsup = all(not r[0] for _, r in rows)
        dts = next((r[1] for _, r in rows if r[1]), "")
        hw: dict = {}
        for _, r in rows:
            for p in r[4].split(","):
                if p:
                    k, v = p.split(":")
                    hw[k] = hw.get(k, True) and v == "1"
        if fb or unsup or hw:
            out[api] = (fb, unsup, dts, hw, [d for d, _ in rows])
    return out


@lru_cache(maxsize=8)
def _chip_hw(chip: Optional[str]) -> Optional[str]:
    if not chip:
        return None
    try:
        from ascendify.kb.chips import chip_info
    except ImportError:
        return None
    info = chip_info(chip)
    return kbapis.FAMILY_HARDWARE.get(info.family) if info else None


def _api_of(node: ast.Call, ctx) -> "tuple[Optional[str], bool]":
    """(API name, is_method_on_unknown_receiver)."""
    q = ctx.call_name(node)
    if q is not None:
        if q.startswith("torch.Tensor."):
            return "Tensor." + q[len("torch.Tensor."):], False
        return q, False
    f = node.func
    if isinstance(f, ast.Attribute):
        return "Tensor." + f.attr, True
    return None, False


def _receiver_is_tensor(node: ast.Call, ctx) -> bool:
    """``torch.randn(..).mode()`` or ``x.mode()`` with ``x = torch.…(…)``."""
    recv = node.func.value if isinstance(node.func, ast.Attribute) else None
    for _ in range(4):
        if recv is None:
            return False
        if isinstance(recv, ast.Name):
            recv = ctx.resolve(recv)
            if recv is None or isinstance(recv, ast.Name):
                return False
            continue
        if isinstance(recv, ast.Call):
            q = ctx.call_name(recv)
            if q and q.startswith("torch."):
                return True
            if isinstance(recv.func, ast.Attribute):
                recv = recv.func.value
                continue
            return False
        if isinstance(recv, (ast.Attribute, ast.Subscript)):
            recv = recv.value
            continue
        return False
    return False


def _method_ok(node: ast.Call, ctx, method: bool, api: str) -> bool:
    if not method:
        return True
    name = api.split(".", 1)[1]
    if name in AMBIGUOUS_METHODS:
        return _receiver_is_tensor(node, ctx)
    return True


def _fallback_names(settings) -> frozenset:
    return _last_parts(api_fallbacks(_release(settings.torch_npu)))


def _may_fallback_names(settings) -> frozenset:
    return _last_parts(api for api, flags in _doc_flags(_release(settings.torch_npu)).items() if flags[0])


def _unsupported_names(settings) -> frozenset:
    hwkey = _chip_hw(settings.chip)
    return _last_parts(api for api, flags in _doc_flags(_release(settings.torch_npu)).items()
                       if flags[1] or hwkey is not None and flags[3].get(hwkey) is False)


@check("OPS001", ast.Call, names=_fallback_names)
def cpu_fallback_op(node: ast.Call, ctx) -> None:
    api, method = _api_of(node, ctx)
    if api is None:
        return
    release = _release(ctx.settings.torch_npu)
    hits = api_fallbacks(release).get(api)
    if not hits or not _method_ok(node, ctx, method, api):
        return
    ops = []
    for op in hits:
        kw = needs_kwarg(op)
        if kw and kwarg(node, kw) is None:
            continue
        ops.append(op)
    if not ops:
        return
    rec = kbapis.recipes_for(ops, [api])
    short = next((r["short"] for r in rec if r.get("short")), None)
    hint = f" — {short}; see `ascendify ops {api}`" if short else f" — see `ascendify ops {api}`"
    ctx.report(node, api=api.replace("torch.nn.functional.", "F."), ops=", ".join(f"aten::{o}" for o in ops),
               release=release, hint=hint)


@check("OPS002", ast.Call, names=_may_fallback_names)
def doc_may_fallback(node: ast.Call, ctx) -> None:
    api, method = _api_of(node, ctx)
    if api is None or method and api.split(".", 1)[1] in AMBIGUOUS_METHODS and not _receiver_is_tensor(node, ctx):
        return
    release = _release(ctx.settings.torch_npu)
    flags = _doc_flags(release).get(api)
    if not flags or not flags[0] or api in api_fallbacks(release):
        return
    table = kbops.load_release(release)
    if _optimizer_on_npu(api, table):
        return  # its foreach/fused kernels are NPU kernels in this release (the op KB): no CPU fallback to expect
    dts = f"; verified dtypes: {flags[2].replace(',', ', ')}" if flags[2] else ""
    own = kbapis.name_based_aten(api)
    if table.ops.get(own, ("",))[0] == "npu_kernel":  # the list and the registrations disagree: say both
        dts += f" (sources disagree: torch_npu {release} registers an NPU kernel for aten::{own})"
    ctx.report(node, api=api, torch=table.torch, dtypes=dts)


@lru_cache(maxsize=1)
def optimizer_kernels() -> dict:
    """Optimizer API → the aten kernels it runs (``rules/data/optimizer_kernels.toml``)."""
    from importlib import resources

    from ascendify.rules.registry import tomllib

    text = resources.files("ascendify.rules").joinpath("data").joinpath("optimizer_kernels.toml").read_text(encoding="utf-8")
    return {k: v["kernels"] for k, v in tomllib.loads(text)["optimizer"].items()}


_OPTIMIZER_ON_NPU: dict = {}  # (api, id of the release's table: tables are cached for the process) -> bool


def _optimizer_on_npu(api: str, table) -> bool:
    key = (api, id(table))
    hit = _OPTIMIZER_ON_NPU.get(key)
    if hit is None:
        hit = _OPTIMIZER_ON_NPU[key] = _optimizer_kernels_on_npu(api, table)
    return hit


def _optimizer_kernels_on_npu(api: str, table) -> bool:
    kernels = optimizer_kernels().get(api)
    if not kernels:
        return False
    ops = table.ops

    def npu(k: str) -> bool:
        if ops.get(k, ("",))[0] == "npu_kernel":
            return True
        return any(name.startswith(k + ".") and v[0] == "npu_kernel" for name, v in ops.items())

    return all(npu(k) for k in kernels)


# APIs whose NPU problem a more specific rule already reports at the same call
_REPORTED_ELSEWHERE = frozenset({
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel",  # DST005
})
_REPORTED_ELSEWHERE_PREFIXES = ("torch.cuda.", "torch.backends.cuda.", "torch.backends.cudnn.")  # DEV rules


@lru_cache(maxsize=1)
def device_independent_apis() -> dict:
    """API → {does, source} from ``rules/data/device_independent_apis.toml``: APIs the support
    lists mark unsupported that do no device work (``torch.compiler.reset``, ``disable``, …)."""
    from importlib import resources

    from ascendify.rules.registry import tomllib

    text = resources.files("ascendify.rules").joinpath("data").joinpath("device_independent_apis.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["api"]


@check("OPS003", ast.Call, names=_unsupported_names)
def doc_unsupported(node: ast.Call, ctx) -> None:
    api, method = _api_of(node, ctx)
    if api is None or api in device_independent_apis() or api in _REPORTED_ELSEWHERE or api.startswith(_REPORTED_ELSEWHERE_PREFIXES) or method and api.split(".", 1)[1] in AMBIGUOUS_METHODS and not _receiver_is_tensor(node, ctx):
        return
    release = _release(ctx.settings.torch_npu)
    flags = _doc_flags(release).get(api)
    if not flags:
        return
    fb, unsup, dts, hw, ids = flags
    hwkey = _chip_hw(ctx.settings.chip)
    chip_bad = hwkey is not None and hw.get(hwkey) is False
    if not unsup and not chip_bad:
        return
    table = kbops.load_release(release)
    own = kbapis.name_based_aten(api)
    extra = []
    what = "is marked unsupported" if unsup else f"is marked ✘ for {hwkey} ({ctx.settings.chip})"
    if unsup and table.ops.get(own, ("",))[0] == "npu_kernel":
        extra.append(f" (sources disagree: torch_npu {release} registers an NPU kernel for aten::{own})")
    ctx.report(node, api=api, what=what, torch=table.torch, hw="".join(extra))


def bmm_claim(release: str) -> str:
    """What the KB says about aten::bmm in ``release``, for OPS004's message: a registered NPU
    kernel is never described as a CPU fallback (and a CPU fallback never as a kernel)."""
    cls, impl, _ = kbops.load_release(release).ops.get("bmm", ("unknown", "", ""))
    if cls == "npu_kernel":
        return (f"torch_npu {release} registers an NPU bmm kernel ({impl}) and its docs verify fp16/fp32 only; "
                "a field guide reports bmm slow on older builds")
    if cls == "cpu_fallback":
        return f"torch_npu {release} has no NPU bmm kernel: bmm runs on the CPU (host copies on every call)"
    return f"torch_npu {release}: bmm is {kbops.SHORT_LABELS.get(cls, cls)}; a field guide reports bmm slow on older builds"


@check("OPS004", ast.Call, names=("bmm",))
def bmm_slow_path(node: ast.Call, ctx) -> None:
    api, method = _api_of(node, ctx)
    if api == "torch.bmm" or (method and api == "Tensor.bmm" and ctx.has_import("torch")):
        ctx.report(node, api=api, claim=bmm_claim(_release(ctx.settings.torch_npu)))


@check("OPS005", ast.Call, names=_last_parts(INSTANCE_NORM))
def instance_norm(node: ast.Call, ctx) -> None:
    q = ctx.call_name(node)
    if q in INSTANCE_NORM:
        ctx.report(node, api=q.replace("torch.nn.functional.", "F.").replace("torch.nn.modules.instancenorm.", "torch.nn."))


@check("OPS006", ast.Call)
def sparse_tensor(node: ast.Call, ctx) -> None:
    q = ctx.call_name(node)
    if q is not None and not q.startswith("torch."):
        return  # every API below is torch's (an unresolved method is tested by its name)
    detail = None
    api = q
    if q in SPARSE_CTORS or (q and q.startswith("torch.sparse.") and q != "torch.sparse.check_sparse_tensor_invariants"):
        detail = ("torch.sparse_csr/csc/bsr/bsc_tensor are unsupported on Atlas A2/A3; sparse_coo_tensor takes only "
                  "int32/int64 indices and fp16/fp32/int32 values (2.13 native-API list)")
    elif q in EMBEDDINGS:
        sp = kwarg(node, "sparse")
        if isinstance(sp, ast.Constant) and sp.value is True:
            detail = "sparse gradients of embeddings are sparse tensors; use sparse=False"
    elif q is None and isinstance(node.func, ast.Attribute) and node.func.attr in SPARSE_METHODS:
        api = "Tensor." + node.func.attr
        detail = "Tensor.to_sparse* conversions are unsupported on Atlas A2/A3 (2.13 native-API list)"
    if detail is None and q is not None:
        lay = kwarg(node, "layout")
        if lay is not None and ctx.qualname(lay) in SPARSE_LAYOUTS and q and q.startswith("torch."):
            api, detail = f"{q}(layout={ctx.qualname(lay)})", "sparse layouts have no NPU fallback"
    if detail:
        ctx.report(node, api=api, detail=detail)


@check("OPS007", ast.Call, names=lambda settings: _deprecated_bases())
def deprecated_npu_api(node: ast.Call, ctx) -> None:
    q = ctx.call_name(node)
    if not q or not (q.startswith("torch_npu.") or q.startswith("torch.ops.npu.")):
        return
    base = q.split(".")[-1]
    hit = _deprecated_bases().get(base)
    if not hit:
        return
    name, ent = hit
    rep = f"; use {ent['replace']}" if ent.get("replace") else "; no replacement is named"
    ctx.report(node, api=q, branches="branches " + ", ".join(ent["branches"]), replacement=rep)


@lru_cache(maxsize=1)
def torchvision_ops() -> dict:
    """``rules/data/torchvision_ops.toml``: ``{"apis": {api: op}, "npu": {op: bool}, "adapter_for": [...]}``."""
    from importlib import resources

    from ascendify.rules.registry import tomllib

    text = resources.files("ascendify.rules").joinpath("data").joinpath("torchvision_ops.toml").read_text(encoding="utf-8")
    doc = tomllib.loads(text)
    apis = {api: op for op, ent in doc["op"].items() for api in ent["apis"]}
    return {"apis": apis, "npu": {op: bool(ent["torchvision_npu"]) for op, ent in doc["op"].items()},
            "adapter_for": list(doc["adapter_for"]), "adapter_torch": list(doc["adapter_torch"])}


def torchvision_op_hint(op: str) -> str:
    """What torchvision_npu does for ``torchvision::op`` (the tail of OPS008's message and of run's
    CPU-fallback line); "" for an op the table does not list."""
    tv = torchvision_ops()
    if op not in tv["npu"]:
        return ""
    if not tv["npu"][op]:
        return ("; Ascend's torchvision_npu has no NPU kernel for it either (its README marks ps_roi_align and "
                "ps_roi_pool unsupported): keep it off the hot path or move its inputs to the CPU explicitly")
    return (f"; Ascend's torchvision_npu (https://github.com/Ascend/vision, released for torchvision "
            f"{', '.join(tv['adapter_for'])}) registers an NPU kernel for it: `import torchvision_npu` after "
            f"`import torch_npu` and `import torchvision`")


@check("OPS008", ast.Call, names=lambda settings: frozenset(a.rsplit(".", 1)[-1] for a in torchvision_ops()["apis"]))
def torchvision_cpp_op(node: ast.Call, ctx) -> None:
    q = ctx.call_name(node)
    op = torchvision_ops()["apis"].get(q) if q else None
    if op is None:
        return
    if torchvision_ops()["npu"][op] and ctx.has_import("torchvision_npu"):
        return  # the adapter's kernel is registered in this file's process (the import runs before any call)
    ctx.report(node, api=q, op=op, hint=torchvision_op_hint(op))
