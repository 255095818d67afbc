"""Device and API rules (DEV), part 2: ``torch.cuda.*`` APIs (from ``data/cuda_api_map.toml``),
NVTX markers, cuDNN / TF32 backend flags, CUDA environment variables.

(``nvidia-smi`` and NVML imports are EXT010's.)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from ascendify.rules.checks import agnostic as agn
from ascendify.rules.checks._util import cuda_api_map, fix
from ascendify.rules.checks.device import torch_name
from ascendify.rules.registry import check
from ascendify.semantic.bindings import ancestors, parent, statement_of
from ascendify.semantic.branches import block_of




_MAP = cuda_api_map()
_NAMES_BY_CODE: dict = {}
for _name, _entry in _MAP.items():
    _NAMES_BY_CODE.setdefault(_entry["code"], set()).add(_name)


@dataclass
class _CudaNames:
    """Local name -> the ``torch.cuda`` member it is bound to."""

    names: dict


def cuda_names(ctx) -> dict:
    """Local names bound to ``torch.cuda`` members (``from torch.cuda import synchronize``), per file."""
    return ctx.state(_CudaNames, lambda c: _CudaNames({k: v[11:] for k, v in c.aliases.items() if v.startswith("torch.cuda.")})).names


def _torch_cuda_ref(node, ctx, names) -> Optional[str]:
    """The ``torch.cuda`` name ``node`` refers to (Attribute ``torch.cuda.X`` or imported Name ``X``), if in ``names``.

    Called for every Attribute and Name node by several rules, so kept to one call."""
    if node.__class__ is ast.Attribute:
        attr = node.attr
        if attr not in names or ctx.qualname(node) != "torch.cuda." + attr:
            return None
        return attr
    try:
        local = ctx._dev_cuda_names
    except AttributeError:
        local = cuda_names(ctx)
    if not local:
        return None
    name = local.get(node.id)
    if name not in names or ctx.qualname(node) != "torch.cuda." + name:  # a parameter or local shadows the import
        return None
    return name


def agnostic_api(name: str, entry: dict) -> str:
    """The device-agnostic API for ``torch.cuda.<name>`` as the ``--target agnostic`` message names it.

    ``torch.<agnostic>`` where the table has one; else ``torch.get_device_module(DEVICE_TYPE).<name>``
    where torch_npu's name is the CUDA name (torch.cuda and torch.npu both have it; torch.cpu,
    the module without an accelerator, mostly does not: checked with dir() on torch 2.13);
    else the NPU name, said to be Ascend-only."""
    if entry.get("agnostic"):
        note = " (it also reseeds the CPU generator)" if entry["agnostic"] == "manual_seed" else ""
        return f"`torch.{entry['agnostic']}`{note}"
    npu = entry.get("npu")
    if npu and npu == name:
        return f"`torch.get_device_module(DEVICE_TYPE).{name}` when an accelerator is present (`torch.cpu` lacks most of these names)"
    if npu:
        return f"no device-agnostic name; on Ascend it is `torch.npu.{npu}`"
    return "no device-agnostic replacement"


def _npu_text(ctx, name: str, node: Optional[ast.AST] = None) -> str:
    t = torch_name(ctx, node)
    return f"{t}.npu.{name}" if t else f"torch_npu.npu.{name}"


def _result_uses(node: ast.AST, ctx) -> set:
    """How the value of the call ``node(...)`` is used: "unpack", "compare", "subscript", "attr:NAME",
    directly or through a name it is assigned to (in the same function)."""
    call = parent(node)
    if not (isinstance(call, ast.Call) and call.func is node):
        return set()
    out: set = set()

    def classify(expr: ast.AST, follow: bool) -> None:
        p = parent(expr)
        if isinstance(p, ast.Compare):
            out.add("compare")
        elif isinstance(p, ast.Subscript) and p.value is expr:
            out.add("subscript")
        elif isinstance(p, ast.Attribute) and p.value is expr:
            out.add("attr:" + p.attr)
        elif isinstance(p, (ast.Assign, ast.AnnAssign)) and p.value is expr:
            for t in (p.targets if isinstance(p, ast.Assign) else [p.target]):
                if isinstance(t, (ast.Tuple, ast.List)):
                    out.add("unpack")
                elif isinstance(t, ast.Name) and follow:
                    scope = ctx.enclosing_function(p) or ctx.tree
                    for n in ast.walk(scope):
                        if n.__class__ is ast.Name and n.id == t.id and isinstance(n.ctx, ast.Load):
                            classify(n, False)
        elif isinstance(p, ast.Tuple) and isinstance(parent(p), ast.Compare):
            out.add("compare")

    classify(call, True)
    return out


def _api_fix(node, ctx, name: str, entry: dict, safe: bool):
    raises_on = entry.get("raises_on")
    if raises_on and _result_uses(node, ctx) & set(raises_on):
        return None  # the renamed call's result raises where it is used (the rule's own note): gate it by hand
    if entry.get("fix") == "unsafe":  # the renamed call still needs its caller reviewed
        safe = False
    if ctx.settings.target == "npu":
        if not entry.get("npu"):
            return None
        op = f"torch.cuda.{name} → torch.npu.{entry['npu']}"
        return fix(ctx.replace(node, _npu_text(ctx, entry["npu"], node)), ctx.add_import(), safe=safe, operation=op)
    t = torch_name(ctx, node)
    if t is None:
        return None
    if entry.get("agnostic_gated"):  # (DEVICE_TYPE != "cpu" and torch.get_device_module(DEVICE_TYPE).NAME(...))
        call = parent(node)
        pre = agn.prelude(ctx)
        if not (isinstance(call, ast.Call) and call.func is node) or pre is None:
            return None
        text = f'{t}.get_device_module({agn.NAME}).{name}({", ".join(ctx.args_text(call))})'
        if not _after_availability_test(node, ctx):  # `torch.cuda.is_available() and ...` gates it already
            text = f'({agn.NAME} != "cpu" and {text})'
        return fix(ctx.replace(call, text), pre, safe=safe and entry.get("agnostic_fix") == "safe",
                   operation=f"torch.cuda.{name} → the {name} of DEVICE_TYPE's module (False on the CPU)")
    guarded = entry.get("agnostic_guarded")
    if guarded and _after_availability_test(node, ctx):
        return fix(ctx.replace(node, f"{t}.{guarded}"), safe=safe, operation=f"torch.cuda.{name} → torch.{guarded} (after an availability test)")
    agnostic = entry.get("agnostic")
    if agnostic and not _torch_has(ctx, entry.get("agnostic_since")):
        return None  # newer than the project's torch (e.g. torch.accelerator.reset_peak_memory_stats on a 2.6 pin): left for a person
    if agnostic:
        ok = safe and entry.get("agnostic_fix") == "safe"
        return fix(ctx.replace(node, f"{t}.{agnostic}"), safe=ok, operation=f"torch.cuda.{name} → torch.{agnostic}")
    dtype = entry.get("dtype")
    call = parent(node)
    if dtype and isinstance(call, ast.Call) and call.args == [node] and not call.keywords:
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr == "type" and ctx.qualname(f) is None:
            pre = agn.prelude(ctx)
            if pre is not None:
                return fix(ctx.rename_attr(f, "to"), ctx.set_args(call, f"{agn.NAME}, {t}.{dtype}"), pre, safe=safe, operation=".type(torch.cuda.XTensor) → .to(DEVICE_TYPE, dtype)")
    return None


def _torch_has(ctx, since: Optional[str]) -> bool:
    """Whether the torch the project is judged against (the torch its target torch_npu release pairs
    with: torch_npu 2.6.0.post5 is for torch 2.6.0) has an API that first shipped in torch ``since``."""
    if not since:
        return True
    from ascendify.kb.versions import pep440_key

    judged = pep440_key(".".join(str(ctx.settings.torch_npu).split(".")[:2]))
    need = pep440_key(since)
    return judged is None or need is None or judged >= need


_AVAILABLE = frozenset({"torch.cuda.is_available", "torch.accelerator.is_available", "torch.npu.is_available"})


def _after_availability_test(node: ast.AST, ctx) -> bool:
    """``node`` is called in ``A and ... and node()`` where an earlier operand is an ``is_available()`` call,
    so it only runs when an accelerator is present."""
    call = parent(node)
    if not isinstance(call, ast.Call) or call.func is not node:
        return False
    op = parent(call)
    if not (isinstance(op, ast.BoolOp) and isinstance(op.op, ast.And)):
        return False
    for v in op.values:
        if v is call:
            return False
        if isinstance(v, ast.Call) and ctx.call_name(v) in _AVAILABLE:
            return True
    return False


def _seeded_before(node: ast.AST, ctx) -> int:
    """The line of a ``torch.manual_seed(...)`` statement before ``node``'s statement in the same block
    (``torch.manual_seed(seed); torch.cuda.manual_seed_all(seed)``), or 0."""
    stmt = statement_of(node)
    for s in (block_of(stmt) if stmt is not None else None) or ():
        if s is stmt:
            break
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and ctx.call_name(s.value) == "torch.manual_seed":
            return s.lineno
    return 0


def _make_api_check(code: str, safe: bool = True):
    names = frozenset(_NAMES_BY_CODE.get(code, ()))

    def api_check(node, ctx) -> None:
        if node.__class__ is ast.Attribute:
            if node.attr not in names:  # the common case, without a call
                return
        else:
            try:
                local = ctx._dev_cuda_names
            except AttributeError:
                local = cuda_names(ctx)
            if not local or node.id not in local:
                return
        name = _torch_cuda_ref(node, ctx, names)
        if name is None or not isinstance(node.ctx, ast.Load) or ctx.model.context(node).npu_aware:
            return
        entry = _MAP[name]
        severity, note = entry.get("severity"), entry.get("note", "")
        if name in ("manual_seed", "manual_seed_all"):
            seeded = _seeded_before(node, ctx)
            if seeded:  # torch.manual_seed seeds every device (torch/random.py: _seed_custom_device), the NPU too
                severity, note = "info", f"repeats `torch.manual_seed` at line {seeded}, which already seeds the NPU"
        ctx.report(node, _api_fix(node, ctx, name, entry, safe), severity=severity, api=f"torch.cuda.{name}",
                   note=note, npu=entry.get("npu") or "", agnostic=agnostic_api(name, entry))

    api_check.__name__ = f"cuda_api_{code}"
    check(code, ast.Attribute, names=names)(api_check)
    return check(code, ast.Name, names=names)(api_check)  # `from torch.cuda import synchronize as sync`: keyed by what it imports


for _code in ("DEV008", "DEV009", "DEV010", "DEV011", "DEV012", "DEV016"):
    _make_api_check(_code)
_make_api_check("DEV013", safe=False)  # NPUGraph captures aclnn ops only: review the captured region


# ---------------------------------------------------------------------- DEV014 nvtx
@check("DEV014", ast.Attribute, ast.Name, names=("nvtx",))  # a Name is keyed by what it imports too
def cuda_nvtx(node, ctx) -> None:
    if node.__class__ is ast.Attribute:
        if node.attr != "nvtx" or ctx.qualname(node) != "torch.cuda.nvtx":
            return
    else:
        local = cuda_names(ctx)
        if not local:
            return
        name = local.get(node.id)
        if name is None or not (name == "nvtx" or name.startswith("nvtx.")):
            return
    p = parent(node)
    where = p if isinstance(p, ast.Attribute) else node
    ctx.report(where, api=ctx.segment(where))


# ---------------------------------------------------------------------- DEV018-020 backend flags
_DETERMINISTIC = "torch.backends.cudnn.deterministic"
_NO_EFFECT_STORES = frozenset(
    {
        "torch.backends.cudnn.benchmark",
        "torch.backends.cudnn.enabled",
        "torch.backends.cudnn.benchmark_limit",
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
    }
)
_NO_EFFECT_CALLS = frozenset(
    {
        "torch.backends.cudnn.flags",
        "torch.backends.cudnn.set_flags",
        "torch.backends.cuda.enable_flash_sdp",
        "torch.backends.cuda.enable_mem_efficient_sdp",
        "torch.backends.cuda.enable_math_sdp",
        "torch.backends.cuda.enable_cudnn_sdp",
        "torch.backends.cuda.sdp_kernel",
        "torch.nn.attention.sdpa_kernel",  # sets the same torch.backends.cuda SDP flags as sdp_kernel
        "torch.backends.cuda.preferred_linalg_library",
        "torch.backends.cuda.preferred_blas_library",
    }
)
_TF32 = {
    "torch.backends.cuda.matmul.allow_tf32": "matmul.allow_hf32",
    "torch.backends.cudnn.allow_tf32": "conv.allow_hf32",
}
_FLAG_ATTRS = frozenset({"deterministic", "benchmark", "enabled", "benchmark_limit", "allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"})


def _stored_flag(node: ast.Attribute, ctx) -> Optional[str]:
    if node.attr not in _FLAG_ATTRS or not isinstance(node.ctx, ast.Store):
        return None
    return ctx.qualname(node)


@check("DEV018", ast.Attribute, names=("deterministic",))
def cudnn_deterministic(node: ast.Attribute, ctx) -> None:
    if node.attr == "deterministic" and _stored_flag(node, ctx) == _DETERMINISTIC:
        ctx.report(node)


_NO_EFFECT_CALL_NAMES = frozenset(q.rsplit(".", 1)[1] for q in _NO_EFFECT_CALLS)


@check("DEV019", ast.Attribute, names=_FLAG_ATTRS)
@check("DEV019", ast.Call, names=_NO_EFFECT_CALL_NAMES)  # a Name call is keyed by what it imports too
def cuda_backend_flag(node, ctx) -> None:
    if isinstance(node, ast.Attribute):
        q = _stored_flag(node, ctx)
        if q in _NO_EFFECT_STORES:
            ctx.report(node, flag=q)
        return
    f = node.func
    if f.__class__ is ast.Name:  # from torch.nn.attention import sdpa_kernel
        if "sdp" not in f.id:
            return
    elif not isinstance(f, ast.Attribute) or f.attr not in ("flags", "set_flags") and "sdp" not in f.attr and not f.attr.startswith("preferred_"):
        return
    q = ctx.qualname(f)
    if q in _NO_EFFECT_CALLS:
        ctx.report(node, flag=q + "()")


@check("DEV020", ast.Attribute, names=("allow_tf32",))
def tf32_flag(node: ast.Attribute, ctx) -> None:
    if node.attr != "allow_tf32":
        return
    q = _stored_flag(node, ctx)
    if q not in _TF32:
        return
    f = None
    if ctx.settings.target == "npu":
        # HF32 is not TF32 bit-for-bit, and the NPU defaults differ (conv HF32 on, matmul HF32 off)
        f = fix(ctx.replace(node, _npu_text(ctx, _TF32[q], node)), ctx.add_import(), safe=False, operation=f"{q} → torch.npu.{_TF32[q]}")
    ctx.report(node, f, flag=q, npu=f"torch.npu.{_TF32[q]}")


# ---------------------------------------------------------------------- DEV025 torch.version.cuda
@check("DEV025", ast.Attribute, names=("cuda",))
def torch_version_cuda(node: ast.Attribute, ctx) -> None:
    if node.attr != "cuda" or not isinstance(node.ctx, ast.Load):
        return
    v = node.value
    if not (isinstance(v, ast.Attribute) and v.attr == "version") or ctx.qualname(node) != "torch.version.cuda":
        return
    if _quiet_place(node) or ctx.model.context(node).npu_aware:
        return
    ctx.report(node, expr=ctx.segment(node))


# ---------------------------------------------------------------------- DEV021/022 env vars
_ENV = {
    "CUDA_VISIBLE_DEVICES": ("DEV021", "ASCEND_RT_VISIBLE_DEVICES"),
    "CUDA_LAUNCH_BLOCKING": ("DEV021", "ASCEND_LAUNCH_BLOCKING"),
    "PYTORCH_CUDA_ALLOC_CONF": ("DEV022", "PYTORCH_NPU_ALLOC_CONF"),
}
_QUIET = frozenset({"print", "debug", "info", "warning", "warn", "error", "exception", "log", "critical", "write", "echo", "secho"})


def _quiet_place(node: ast.AST) -> bool:
    """Docstrings and text printed or logged (not code that runs)."""
    p = parent(node)
    if isinstance(p, ast.JoinedStr):
        p = parent(p)
    if isinstance(p, ast.Expr):
        return True
    for a in ancestors(node):
        if isinstance(a, ast.Call):
            f = a.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            return name in _QUIET
        if isinstance(a, (ast.stmt, ast.Lambda)):
            return False
    return False


def _env_edit(node: ast.Constant, ctx, old: str, new: str):
    p = parent(node)
    if isinstance(p, ast.JoinedStr):
        return p, ctx.replace(p, ctx.segment(p).replace(old, new))
    seg = ctx.segment(node)
    if old not in seg:
        return node, None
    return node, ctx.replace(node, seg.replace(old, new))


def _make_env_check(code: str, safe: bool):
    names = {k: v[1] for k, v in _ENV.items() if v[0] == code}

    def env_check(node: ast.Constant, ctx) -> None:
        v = node.value
        if v.__class__ is not str or "CUDA" not in v:
            return
        for old, new in names.items():
            if old in v and (v == old or old + "=" in v):
                break
        else:
            return
        if _quiet_place(node):
            return
        where, edit = _env_edit(node, ctx, old, new)
        if ctx.settings.target != "npu":  # device-agnostic code must keep working on CUDA too
            edit = None
        ctx.report(where, fix(edit, safe=safe, operation=f"{old} → {new}") if edit else None, var=old, npu=new)

    env_check.__name__ = f"cuda_env_{code}"
    return check(code, ast.Constant)(env_check)


_make_env_check("DEV021", safe=True)
_make_env_check("DEV022", safe=False)  # the NPU allocator accepts a different set of keys
