"""dtype rules (DTY): float64, complex, bf16 against the configured chip, dtypes torch_npu rejects."""

from __future__ import annotations

import ast
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Optional

from ascendify.kb.chips import chip_info, families
from ascendify.rules.checks._util import arg, kwarg, method_call
from ascendify.rules.registry import check
from ascendify.semantic.bindings import ancestors, parent

FP64 = frozenset({"torch.float64", "torch.double"})
FP64_TENSOR_TYPES = frozenset({"torch.DoubleTensor", "torch.cuda.DoubleTensor"})
COMPLEX = frozenset({"torch.complex64", "torch.cfloat", "torch.complex128", "torch.cdouble", "torch.complex32", "torch.chalf"})
COMPLEX_CALLS = frozenset({"torch.view_as_complex", "torch.polar", "torch.complex"})
_COMPLEX_ATTRS = frozenset(n.split(".")[1] for n in COMPLEX)
QUANTIZED = frozenset({"torch.qint8", "torch.quint8", "torch.qint32", "torch.quint4x2", "torch.quint2x4"})
BF16_STRINGS = frozenset({"bf16", "bfloat16", "torch.bfloat16", "bf16-mixed", "bf16-true"})
BF16_KEYWORDS = frozenset({"dtype", "torch_dtype", "mixed_precision", "precision"})
_CPU_CHAIN = frozenset({"cpu", "numpy", "tolist", "item"})


# ---------------------------------------------------------------- helpers
def _dtype_name(node: Optional[ast.AST], ctx) -> Optional[str]:
    """Qualified dtype name of ``node`` (following a simple local constant), e.g. ``torch.float64``."""
    if node is None:
        return None
    q = ctx.qualname(node)
    if q is None and isinstance(node, ast.Name):
        target = ctx.resolve(node)
        if target is not None and target is not node:
            q = ctx.qualname(target)
    return q


def _is_cpu_string(node: Optional[ast.AST], ctx) -> bool:
    s = ctx.resolve_str(node) if node is not None else None
    return s is not None and s.split(":")[0] == "cpu"


def _receiver_on_cpu(func: ast.Attribute) -> bool:
    """True if the method's receiver chain goes through ``.cpu()`` / ``.numpy()`` (host data)."""
    node = func.value
    while True:
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in _CPU_CHAIN:
                return True
            node = f.value if isinstance(f, ast.Attribute) else None
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        else:
            return False


def _in_comparison(node: ast.AST) -> bool:
    """``x.dtype == torch.bfloat16``, ``dtype in (torch.float16, torch.bfloat16)``: a test, not a use."""
    for p in ancestors(node):
        if isinstance(p, ast.Compare):
            return True
        if isinstance(p, (ast.stmt, ast.Call)):
            return False
    return False


@dataclass
class _Reported:
    """(rule key, line) pairs already reported in the file."""

    seen: set = field(default_factory=set)


def _per_line_once(ctx, key: str, node: ast.AST) -> bool:
    seen = ctx.state(_Reported).seen
    k = (key, node.lineno)
    if k in seen:
        return False
    seen.add(k)
    return True


# ---------------------------------------------------------------- DTY001
@check("DTY001", ast.Call, names=("set_default_dtype", "set_default_tensor_type"))
def default_dtype_fp64(node: ast.Call, ctx) -> None:
    f = node.func
    short = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if short not in ("set_default_dtype", "set_default_tensor_type"):
        return
    name = ctx.call_name(node)
    if name not in ("torch.set_default_dtype", "torch.set_default_tensor_type"):
        return
    a = arg(node, 0, "d") or arg(node, 0, "t")
    dt = _dtype_name(a, ctx)
    s = ctx.resolve_str(a) if a is not None else None
    if dt in FP64 or dt in FP64_TENSOR_TYPES or s in FP64_TENSOR_TYPES:
        ctx.report(node, call=ctx.segment(node))


# ---------------------------------------------------------------- DTY002
@check("DTY002", ast.Call)
def fp64_factory(node: ast.Call, ctx) -> None:
    if not node.keywords:
        return
    d = kwarg(node, "dtype")
    if d is None:
        return
    if method_call(node, "to", "type", "set_default_dtype") is not None:
        return  # .to(dtype=...) is DTY003; set_default_dtype is DTY001
    if _dtype_name(d, ctx) not in FP64:
        return
    if _is_cpu_string(kwarg(node, "device"), ctx):
        return
    if isinstance(node.func, ast.Attribute) and _receiver_on_cpu(node.func):
        return
    if kwarg(node, "device") is None and _host_factory(node, ctx):
        from ascendify.rules.checks._hostflow import stays_on_host

        if stays_on_host(node, ctx):
            return  # made on the CPU and cast before it moves (a float32 buffer): no fp64 reaches the NPU
    ctx.report(d, dtype=ctx.segment(d))


_HOST_FACTORIES = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.arange", "torch.linspace",
                             "torch.logspace", "torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.eye",
                             "torch.tensor"})


@dataclass
class _DefaultDevice:
    """Does the file change the default device (``torch.set_default_device``, ``with torch.device(...)``)?"""

    set: bool = False


def _sets_default_device(ctx) -> bool:
    def make(c) -> _DefaultDevice:
        for n in ast.walk(c.tree):
            if isinstance(n, ast.Call) and c.call_name(n) in ("torch.set_default_device", "torch.device"):
                if c.call_name(n) == "torch.set_default_device" or isinstance(parent(n), ast.withitem):
                    return _DefaultDevice(True)
        return _DefaultDevice(False)

    return ctx.state(_DefaultDevice, make).set


def _host_factory(node: ast.Call, ctx) -> bool:
    """A torch factory without ``device=`` makes a CPU tensor (unless the file moves the default device);
    ``torch.tensor`` only of literal data (a tensor argument keeps its own device)."""
    name = ctx.call_name(node)
    if name not in _HOST_FACTORIES:
        return False
    if name == "torch.tensor" and not (node.args and isinstance(node.args[0], (ast.Constant, ast.List, ast.Tuple))):
        return False
    return not _sets_default_device(ctx)


# ---------------------------------------------------------------- DTY003
@check("DTY003", ast.Call, names=("double", "to", "type"))
def fp64_cast(node: ast.Call, ctx) -> None:
    m = method_call(node, "double", "to", "type")
    if m is None:
        return
    func = node.func
    if ctx.qualname(func) is not None:  # a module function (np.double, torch.type…), not a method
        return
    if m == "double":
        if node.args or node.keywords:
            return
    elif m == "to":
        if not any(_dtype_name(a, ctx) in FP64 for a in list(node.args) + [kwarg(node, "dtype")] if a is not None):
            _numpy_to_device(node, ctx)
            return
        if _is_cpu_string(kwarg(node, "device"), ctx) or (node.args and _is_cpu_string(node.args[0], ctx)):
            return
    else:  # .type(...)
        a = arg(node, 0, "dtype")
        if a is None:
            return
        dt = _dtype_name(a, ctx)
        s = ctx.resolve_str(a)
        if not (dt in FP64 or dt in FP64_TENSOR_TYPES or s in FP64_TENSOR_TYPES):
            return
    if _receiver_on_cpu(func):
        return
    ctx.report(node, call=f".{m}({', '.join(ctx.args_text(node))})")


def _numpy_to_device(node: ast.Call, ctx) -> None:
    """``torch.from_numpy(arr).to(device)``: a NumPy float array is float64 unless made otherwise
    (``np.linspace``, ``np.array([0.1])``), and ``from_numpy`` keeps its dtype, so the tensor lands on
    the NPU as float64 (DiT's ``th.from_numpy(arr).to(device)[timesteps]``, field trial, issue 23).
    Not reported with a dtype in ``.to()``, a cast right after, a CPU target, or an array cast first."""
    inner = node.func.value  # type: ignore[attr-defined]
    if not (isinstance(inner, ast.Call) and ctx.call_name(inner) == "torch.from_numpy" and inner.args):
        return
    if any(k.arg == "dtype" for k in node.keywords) or len(node.args) > 1 or not node.args:
        return  # .to(device, dtype) / .to(device=..., dtype=...) / .to(other_tensor)?
    if _is_cpu_string(node.args[0], ctx):
        return
    src = inner.args[0]
    if isinstance(src, ast.Call) and isinstance(src.func, ast.Attribute) and src.func.attr == "astype":
        return  # arr.astype(np.float32)
    p = getattr(node, "_asc_parent", None)
    if isinstance(p, ast.Attribute) and p.attr in ("float", "half", "bfloat16", "long", "int", "bool", "to", "type"):
        return  # .to(device).float()
    ctx.report(node, message=(f"`{ctx.segment(node)[:80]}` moves a NumPy array with its own dtype, float64 unless made "
                              "otherwise (np.linspace, np.array of floats): many NPU kernels lack fp64; add "
                              "`dtype=torch.float32` to `.to()` or `.astype(np.float32)` first"))


# ---------------------------------------------------------------- DTY004
@check("DTY004", ast.Attribute, names=_COMPLEX_ATTRS)
def complex_dtype(node: ast.Attribute, ctx) -> None:
    if node.attr not in _COMPLEX_ATTRS:
        return
    q = ctx.qualname(node)
    if q not in COMPLEX or _in_comparison(node):
        return
    if _per_line_once(ctx, "DTY004", node):
        ctx.report(node, what=f"`{q}`")


@check("DTY004", ast.Call, names=("view_as_complex", "polar", "complex", "cfloat", "cdouble", "chalf"))
def complex_call(node: ast.Call, ctx) -> None:
    f = node.func
    if not isinstance(f, ast.Attribute) or f.attr not in ("view_as_complex", "polar", "complex", "cfloat", "cdouble", "chalf"):
        return
    q = ctx.qualname(f)
    if q is not None:
        if q not in COMPLEX_CALLS:
            return
        what = f"`{q}`"
    else:
        if f.attr not in ("cfloat", "cdouble", "chalf") or node.args or node.keywords:
            return
        what = f"`.{f.attr}()`"
    if _per_line_once(ctx, "DTY004", node):
        ctx.report(node, what=what)


# ---------------------------------------------------------------- DTY005
def chip_bf16(chip: Optional[str]) -> tuple:
    """``(bf16, family_name)`` for a soc_version from ``ascendify.kb.chips``;
    ``bf16`` is True/False, or None when unknown (unknown chip, or sources disagree)."""
    if not chip:
        return None, None
    info = chip_info(chip)
    if info is None:
        return None, None
    return info.bf16, info.family_name


@lru_cache(maxsize=1)
def _families_without_bf16() -> str:
    return ", ".join(f["name"] for f in families().values() if f.get("bf16") is False and f.get("torch_npu_supported"))


def _bf16_guarded(node: ast.AST) -> bool:
    """Inside an if / conditional expression whose test calls ``is_bf16_supported``."""
    for p in ancestors(node):
        if isinstance(p, (ast.If, ast.IfExp, ast.While)):
            for sub in ast.walk(p.test):
                if isinstance(sub, ast.Attribute) and "bf16_supported" in sub.attr:
                    return True
                if isinstance(sub, ast.Name) and "bf16_supported" in sub.id:
                    return True
        elif isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False
    return False


def _report_bf16(node: ast.AST, ctx, what: str) -> None:
    if _bf16_guarded(node) or not _per_line_once(ctx, "DTY005", node):
        return
    chip = ctx.settings.chip
    bf16, family = chip_bf16(chip)
    if bf16 is True:
        return
    if bf16 is False:
        ctx.report(node, what=what, detail=f"{chip} ({family}) has no bf16 support; use float16 with loss scaling or fp32")
        return
    lacking = _families_without_bf16()
    if family:
        detail = f"bf16 support of {chip} ({family}) is not confirmed (sources disagree); check `torch.npu.is_bf16_supported()` on the device"
    elif chip:
        detail = f"chip {chip} is not in ascendify's chip table; bf16 needs Ascend910B1 or newer (A2/A3/950), not {lacking}"
    else:
        detail = f"bf16 needs Atlas A2/A3/950 (Ascend910B1 or newer); {lacking} have none{NO_CHIP_HINT}"
    ctx.report(node, severity="info", what=what, detail=detail)


NO_CHIP_HINT = " — set `--chip SOC` (e.g. `--chip Ascend910B3`, or `chip` in the config) to check each use against the chip"


def bf16_project_note(findings: list, settings) -> list:
    """DTY005 without a chip that lacks bf16: one note per project, not one finding per bf16 use.

    With no ``chip``, an unknown one, or one whose bf16 support is unconfirmed, every bf16 use
    is the same question (does the chip have bf16?), so the first use (in file order) keeps
    an info finding whose message counts the others and says how to set the chip; the
    others are dropped.  With a chip that has no bf16, every use stays a finding.
    ``findings`` is the whole scan's list; returns the list to keep (same order)."""
    bf16, _family = chip_bf16(settings.chip)
    if bf16 is False:
        return findings
    uses = [f for f in findings if f.code == "DTY005"]
    if len(uses) < 2:
        return findings
    first = min(uses, key=lambda f: f.sort_key())
    files = len({f.path for f in uses})
    more = len(uses) - 1
    first.severity = "info"
    count = f"; {more} more bf16 use{'s' if more != 1 else ''} in {files} file{'s' if files != 1 else ''} of this project, not listed"
    head, sep, tail = first.message.partition(NO_CHIP_HINT)
    first.message = head + count + sep + tail if sep else first.message + count
    return [f for f in findings if f.code != "DTY005" or f is first]


@check("DTY005", ast.Attribute, names=("bfloat16",))
def bf16_attr(node: ast.Attribute, ctx) -> None:
    if node.attr != "bfloat16":
        return
    p = parent(node)
    if isinstance(p, ast.Call) and p.func is node:  # x.bfloat16()
        if ctx.qualname(node) is None and not p.args:
            _report_bf16(p, ctx, "`.bfloat16()`")
        return
    if ctx.qualname(node) != "torch.bfloat16" or _in_comparison(node):
        return
    _report_bf16(node, ctx, "`torch.bfloat16`")


@check("DTY005", ast.keyword)
def bf16_string(node: ast.keyword, ctx) -> None:
    v = node.value
    if not isinstance(v, ast.Constant) or not isinstance(v.value, str) or v.value.lower() not in BF16_STRINGS:
        return
    key = node.arg or ""
    if key in BF16_KEYWORDS:
        _report_bf16(v, ctx, f'`{key}="{v.value}"`')
    elif key == "default":  # parser.add_argument("--mixed-precision", default="bf16")
        call = parent(node)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument":
            opts = " ".join(a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
            if "precision" in opts or "dtype" in opts:
                _report_bf16(v, ctx, f'default "{v.value}" of `{opts}`')


# ---------------------------------------------------------------- DTY006
@check("DTY006", ast.Attribute, names=tuple(q.split(".")[1] for q in QUANTIZED) + ("uint64",))
def unsupported_dtype(node: ast.Attribute, ctx) -> None:
    if not node.attr.startswith(("q", "uint64")):
        return
    q = ctx.qualname(node)
    if q in QUANTIZED:
        reason = "is in torch_npu's unsupported-dtype list: such tensors cannot be placed on the NPU"
    elif q == "torch.uint64":
        reason = "tensors can be created on the NPU but arithmetic on them fails (aclnn kernels lack DT_UINT64)"
    else:
        return
    if _in_comparison(node):
        return
    ctx.report(node, dtype=q, reason=reason)
