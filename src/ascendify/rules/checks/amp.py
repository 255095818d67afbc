"""AMP rules (AMP): CUDA autocast / GradScaler, device strings in ``torch.amp``, loss-scale guard, apex.amp.

``--target agnostic`` rewrites keep what the CUDA code did on a machine without
CUDA: there ``torch.cuda.amp.autocast`` and ``GradScaler`` disable themselves
(with a warning), so the rewritten calls pass ``enabled=DEVICE_TYPE != "cpu"``
— ``torch.amp.autocast("cpu")`` would otherwise turn on bfloat16 autocast and
change the numerics, and ``torch.amp.GradScaler("cpu")`` would scale losses.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Optional

from ascendify.rules.checks import agnostic as agn
from ascendify.rules.checks._util import arg, fix, kwarg, torch_root
from ascendify.rules.registry import check, file_check, last_parts
from ascendify.semantic.bindings import parent
from ascendify.diagnostics import Edit

KINDS = ("autocast", "GradScaler", "custom_fwd", "custom_bwd")
_LEGACY_MODS = ("torch.cuda.amp", "torch.cuda.amp.autocast_mode", "torch.cuda.amp.grad_scaler")
_LEGACY = {f"{m}.{k}": k for m in _LEGACY_MODS for k in KINDS}
_LEGACY_POS = {"autocast": ("enabled", "dtype", "cache_enabled"),
               "GradScaler": ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled")}
_OFF_CPU = f'{agn.NAME} != "cpu"'
_SIMPLE = (ast.Name, ast.Attribute, ast.Constant, ast.Call, ast.Subscript)


def _enabled_text(ctx, node: Optional[ast.AST]) -> Optional[str]:
    """``enabled=`` value that also turns AMP off on a CPU-only machine (None: leave as written)."""
    if node is None:
        return _OFF_CPU
    if isinstance(node, ast.Constant):
        return _OFF_CPU if node.value is True else None
    text = ctx.segment(node)
    if "\n" in text:
        return None
    return f"{text} and {_OFF_CPU}" if isinstance(node, _SIMPLE) else f"({text}) and {_OFF_CPU}"


def _plain_args(call: ast.Call) -> bool:
    return not any(isinstance(a, ast.Starred) for a in call.args) and all(k.arg for k in call.keywords)


def _legacy_call_args(ctx, call: ast.Call, kind: str) -> Optional[str]:
    """Arguments for ``torch.amp.<kind>(DEVICE_TYPE, ...)`` from a ``torch.cuda.amp.<kind>(...)`` call."""
    if not _plain_args(call):
        return None
    names = _LEGACY_POS[kind]
    if len(call.args) > len(names):
        return None
    pos, kws, enabled = [agn.NAME], [], None
    for i, a in enumerate(call.args):
        if names[i] == "enabled" or kind == "autocast":  # autocast: all legacy positionals become keywords
            if names[i] == "enabled":
                enabled = a
            else:
                kws.append(f"{names[i]}={ctx.segment(a)}")
        else:
            pos.append(ctx.segment(a))
    for k in call.keywords:
        if k.arg == "enabled":
            enabled = k.value
        else:
            kws.append(f"{k.arg}={ctx.segment(k.value)}")
    en = _enabled_text(ctx, enabled)
    if en is not None:
        kws.append(f"enabled={en}")
    elif enabled is not None:
        kws.append(f"enabled={ctx.segment(enabled)}")
    if any("\n" in x for x in pos + kws):
        return None
    return ", ".join(pos + kws)


def _decorated(node: ast.AST) -> bool:
    p = parent(node)
    return isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node in p.decorator_list


def _agnostic_use_edits(ctx, use: ast.AST, kind: str, new_func: Optional[str]) -> Optional[list]:
    """Edits turning one use of a legacy AMP name into its ``torch.amp`` form.

    ``new_func``: replacement text for the used expression (None = keep it, the
    import is rewritten instead).  Returns None when the use cannot be rewritten.
    """
    p = parent(use)
    is_call = isinstance(p, ast.Call) and p.func is use
    edits = []
    if kind in ("autocast", "GradScaler"):
        if not is_call:
            if kind == "GradScaler":  # isinstance(x, GradScaler), a class reference: the torch.amp class is its base
                return [ctx.replace(use, new_func)] if new_func else []
            return None
        args = _legacy_call_args(ctx, p, kind)
        if args is None:
            return None
        if new_func:
            edits.append(ctx.replace(use, new_func))
        edits.append(ctx.set_args(p, args))
        return edits
    # custom_fwd / custom_bwd: device_type is keyword-only in torch.amp
    if is_call:
        if kwarg(p, "device_type") is not None:
            return None
        if new_func:
            edits.append(ctx.replace(use, new_func))
        edits.append(ctx.add_keyword(p, f"device_type={agn.NAME}"))
        return edits
    if _decorated(use):
        base = new_func or ctx.segment(use)
        return [ctx.replace(use, f"{base}(device_type={agn.NAME})")]
    return None


# ---------------------------------------------------------------------- AMP001
def _cuda_link(node: ast.Attribute, ctx) -> Optional[ast.Attribute]:
    """The ``<torch>.cuda`` Attribute inside ``<torch>.cuda.amp[...].X``, or None."""
    cur = node.value
    while isinstance(cur, ast.Attribute):
        if cur.attr == "cuda" and ctx.qualname(cur) == "torch.cuda" and isinstance(cur.value, ast.Name):
            return cur
        cur = cur.value
    return None


@check("AMP001", ast.Attribute, names=KINDS)
def cuda_amp_attr(node: ast.Attribute, ctx) -> None:
    if node.attr not in KINDS:
        return
    kind = _LEGACY.get(ctx.qualname(node) or "")
    if kind is None:
        return
    link = _cuda_link(node, ctx)
    if link is None:
        return  # `amp.autocast` after `from torch.cuda import amp`: reported at the import
    if ctx.settings.target == "npu":
        f = fix(ctx.rename_attr(link, "npu"), ctx.add_import(), operation=f"use torch.npu.amp.{kind}")
    else:
        pre, t = agn.prelude(ctx), torch_root(ctx)
        f = None
        if pre is not None and t is not None:
            edits = _agnostic_use_edits(ctx, node, kind, f"{t}.amp.{kind}")
            if edits is not None:
                f = fix(*edits, pre, operation=f"use torch.amp.{kind} with DEVICE_TYPE")
    ctx.report(node, f, name=ctx.segment(node), kind=kind)


def _module_span(ctx, stmt: ast.stmt, dotted: str, alias: Optional[ast.alias] = None) -> Optional[tuple]:
    """((line, col), (line, end_col)) of the dotted module name written in an import statement."""
    if alias is not None and getattr(alias, "lineno", None):
        line, col = alias.lineno, ctx.char_col(alias.lineno, alias.col_offset)
        if ctx.lines[line - 1][col: col + len(dotted)] == dotted:
            return (line, col), (line, col + len(dotted))
        return None
    line = stmt.lineno
    text = ctx.lines[line - 1]
    start = ctx.char_col(line, stmt.col_offset)
    kw = "from" if isinstance(stmt, ast.ImportFrom) else "import"
    m = re.compile(rf"{kw}\s+{re.escape(dotted)}(?![\w.])").match(text, start)
    if not m:
        return None
    col = m.end() - len(dotted)
    return (line, col), (line, m.end())


def _uses(ctx, local: str) -> Optional[list]:
    """Name nodes (loads) bound to the import ``local``; None when the name is rebound somewhere."""
    out = []
    for n in ast.walk(ctx.tree):
        if isinstance(n, ast.Name) and n.id == local:
            if not isinstance(n.ctx, ast.Load):
                return None
            out.append(n)
        elif (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == local) or (
            isinstance(n, ast.arg) and n.arg == local
        ):
            return None
    return out


@check("AMP001", ast.ImportFrom, ast.Import)
def cuda_amp_import(node: ast.stmt, ctx) -> None:
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.asname and a.name in _LEGACY_MODS:
                f = None
                if ctx.settings.target == "npu":
                    span = _module_span(ctx, node, a.name, a)
                    if span:
                        new = a.name.replace("torch.cuda.amp", "torch_npu.npu.amp", 1)
                        f = fix(Edit("replace", new, *span), operation="import torch_npu.npu.amp")
                ctx.report(node, f, name=f"import {a.name}", kind="AMP")
        return
    mod = node.module
    if not mod or node.level:
        return
    if mod == "torch.cuda" and any(a.name == "amp" for a in node.names):
        f = None
        if all(a.name == "amp" for a in node.names):
            span = _module_span(ctx, node, mod)
            if span and ctx.settings.target == "npu":
                f = fix(Edit("replace", "torch_npu.npu", *span), operation="import amp from torch_npu.npu")
            elif span:
                f = _agnostic_amp_module(ctx, node, span)
        ctx.report(node, f, name="from torch.cuda import amp", kind="AMP")
        return
    if mod not in _LEGACY_MODS:
        return
    names = [a for a in node.names if a.name != "*"]
    f = None
    span = _module_span(ctx, node, mod)
    if span is not None and ctx.settings.target == "npu":
        f = fix(Edit("replace", mod.replace("torch.cuda.amp", "torch_npu.npu.amp", 1), *span),
                operation="import from torch_npu.npu.amp")
    elif span is not None and mod == "torch.cuda.amp" and names and all(a.name in KINDS for a in node.names):
        pre = agn.prelude(ctx)
        edits = [Edit("replace", "torch.amp", *span)] if pre is not None else None
        for a in names:
            if edits is None:
                break
            uses = _uses(ctx, a.asname or a.name)
            if uses is None:
                edits = None
                break
            for u in uses:
                e = _agnostic_use_edits(ctx, u, a.name, None)
                if e is None:
                    edits = None
                    break
                edits.extend(e)
        if edits is not None:
            f = fix(*edits, pre, operation="import from torch.amp and pass DEVICE_TYPE")
    listed = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in node.names)
    ctx.report(node, f, name=f"from {mod} import {listed}", kind="AMP")


def _agnostic_amp_module(ctx, node: ast.ImportFrom, span: tuple):
    """``from torch.cuda import amp`` → ``from torch import amp``, each ``amp.autocast(...)`` /
    ``amp.GradScaler(...)`` given ``DEVICE_TYPE`` (as for the imported names).  None when some use
    of ``amp`` is something else or cannot be rewritten."""
    pre = agn.prelude(ctx)
    uses = _uses(ctx, node.names[0].asname or "amp")
    if pre is None or uses is None:
        return None
    edits = [Edit("replace", "torch", *span)]
    for u in uses:
        attr = parent(u)
        if not (isinstance(attr, ast.Attribute) and attr.value is u and attr.attr in KINDS):
            return None
        e = _agnostic_use_edits(ctx, attr, attr.attr, None)
        if e is None:
            return None
        edits.extend(e)
    return fix(*edits, pre, operation="import amp from torch and pass DEVICE_TYPE")


# ---------------------------------------------------------------------- AMP002
_AMP_DEVICE = {  # qualified name -> (kind, position of the device argument, keyword)
    "torch.amp.autocast": ("autocast", 0, "device_type"),
    "torch.autocast": ("autocast", 0, "device_type"),
    "torch.amp.autocast_mode.autocast": ("autocast", 0, "device_type"),
    "torch.amp.GradScaler": ("GradScaler", 0, "device"),
    "torch.amp.grad_scaler.GradScaler": ("GradScaler", 0, "device"),
    "torch.amp.custom_fwd": ("custom_fwd", None, "device_type"),
    "torch.amp.custom_bwd": ("custom_bwd", None, "device_type"),
    "torch.amp.autocast_mode.custom_fwd": ("custom_fwd", None, "device_type"),
    "torch.amp.autocast_mode.custom_bwd": ("custom_bwd", None, "device_type"),
}
_ENABLED_POS = {"autocast": 2, "GradScaler": 5}


@check("AMP002", ast.Call, names=KINDS)
def amp_cuda_device(node: ast.Call, ctx) -> None:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if name not in KINDS:
        return
    spec = _AMP_DEVICE.get(ctx.call_name(node) or "")
    if spec is None:
        return
    kind, pos, kw = spec
    dev = arg(node, pos, kw) if pos is not None else kwarg(node, kw)
    if dev is None:
        if kind != "GradScaler" or not _plain_args(node):
            return  # autocast / custom_fwd need the device; GradScaler defaults to "cuda"
        where, literal = node, None
    elif isinstance(dev, ast.Constant) and isinstance(dev.value, str) and re.match(r"^cuda(:\d+)?$", dev.value):
        where, literal = dev, dev
    else:
        return  # a variable: its "cuda" literal, if any, is reported where it is written (DEV rules)
    npu = ctx.settings.target == "npu"
    fx = None
    if npu:
        if literal is not None:
            if not isinstance(parent(literal), ast.JoinedStr):
                fx = fix(ctx.replace_string(literal, "npu"), ctx.add_import(), operation=f"{kind} on npu")
        else:
            fx = fix(ctx.add_keyword(node, 'device="npu"'), ctx.add_import(), operation="GradScaler on npu")
    else:
        pre = agn.prelude(ctx)
        if pre is not None:
            edits = [ctx.replace(literal, agn.NAME) if literal is not None else ctx.add_keyword(node, f"device={agn.NAME}")]
            if kind in _ENABLED_POS:
                en_node = arg(node, _ENABLED_POS[kind], "enabled")
                en = _enabled_text(ctx, en_node)
                if en is not None:
                    edits.append(ctx.replace(en_node, en) if en_node is not None else ctx.add_keyword(node, f"enabled={en}"))
            fx = fix(*edits, pre, operation=f"{kind} on DEVICE_TYPE")
    ctx.report(where, fx, name=ctx.segment(node.func), value=repr(literal.value) if literal is not None else 'the default "cuda"')


# ---------------------------------------------------------------------- AMP003
_CLIP_CALL = re.compile(r"\b\w*clip_grad\w*\s*\(|\bclip_gradients?\s*\(")

@check("AMP003", ast.Call, names=("step",))
def scaler_step_unguarded(node: ast.Call, ctx) -> None:
    f = node.func
    if not (isinstance(f, ast.Attribute) and f.attr == "step" and len(node.args) >= 1):
        return
    recv = ctx.dotted(f.value)
    if recv is None or "scaler" not in recv.lower() or "GradScaler" not in ctx.text:
        return
    scope = ctx.enclosing_function(node)
    text = ctx.segment(scope) if scope is not None else ctx.text
    has_unscale = f"{recv}.unscale_(" in text
    # clip_grad_norm_ / clip_grad_value_, or a project helper (`dispatch_clip_grad(...)`, `self.clip_gradients(...)`)
    has_clip = _CLIP_CALL.search(text) is not None
    if has_unscale and has_clip:
        return
    missing = "`unscale_` and gradient clipping" if not (has_unscale or has_clip) else (
        "gradient clipping" if has_unscale else "`unscale_` before clipping (clipping sees scaled gradients)")
    ctx.report(node, None, name=recv, missing=missing, opt=ctx.segment(node.args[0]))


# ---------------------------------------------------------------------- AMP004
@check("AMP004", ast.ImportFrom, ast.Import)
def apex_amp(node: ast.stmt, ctx) -> None:
    if isinstance(node, ast.Import):
        if any(a.name == "apex.amp" or a.name.startswith("apex.amp.") for a in node.names):
            ctx.report(node, None)
        return
    if node.level or not node.module:
        return
    if node.module == "apex.amp" or node.module.startswith("apex.amp.") or (
        node.module == "apex" and any(a.name == "amp" for a in node.names)
    ):
        ctx.report(node, None)


# ---------------------------------------------------------------------- AMP005
_STATE = {  # legacy CUDA-default autocast-state call -> (new function, number of legacy args)
    "torch.is_autocast_enabled": ("is_autocast_enabled", 0),
    "torch.set_autocast_enabled": ("set_autocast_enabled", 1),
    "torch.get_autocast_gpu_dtype": ("get_autocast_dtype", 0),
    "torch.set_autocast_gpu_dtype": ("set_autocast_dtype", 1),
}


@check("AMP005", ast.Call, names=last_parts(_STATE))
def autocast_state_default(node: ast.Call, ctx) -> None:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if "autocast" not in name:
        return
    qn = ctx.call_name(node)
    spec = _STATE.get(qn or "")
    if spec is None:
        return
    new, nargs = spec
    if len(node.args) != nargs or node.keywords:
        return  # already passes a device type (or unusual arguments)
    dev = '"npu"' if ctx.settings.target == "npu" else agn.NAME
    pre = agn.prelude(ctx) if ctx.settings.target != "npu" else ctx.add_import()
    fx = None
    if pre is not None:
        args = ", ".join([dev] + [ctx.segment(a) for a in node.args])
        edits = [ctx.set_args(node, args)]
        if name != new:
            edits.insert(0, ctx.rename_attr(f, new) if isinstance(f, ast.Attribute) else ctx.replace(f, new))
        if isinstance(f, ast.Name):
            edits = None  # `from torch import get_autocast_gpu_dtype`: the new name is not imported
        if edits:
            # agnostic: on a CPU-only machine set_autocast_enabled(True) would now enable CPU (bf16) autocast
            risky = ctx.settings.target != "npu" and new == "set_autocast_enabled"
            fx = fix(*edits, pre, safe=not risky, operation=f"pass the device type to torch.{new}")
    ctx.report(node, fx, name=qn, new=new)


# ---------------------------------------------------------------------- AMP006 / AMP007
_AUTOCASTS = {"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast", "torch.cuda.amp.autocast",
              "torch.npu.amp.autocast", "torch_npu.npu.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"}


def _autocast_item(item: ast.withitem, ctx) -> Optional[ast.Call]:
    e = item.context_expr
    if isinstance(e, ast.Call) and ctx.call_name(e) in _AUTOCASTS:
        return e
    return None


@check("AMP006", ast.Call, names=("backward",))
def backward_in_autocast(node: ast.Call, ctx) -> None:
    f = node.func
    if not (isinstance(f, ast.Attribute) and f.attr == "backward"):
        return
    for p in _ancestors_until_function(node):
        if isinstance(p, (ast.With, ast.AsyncWith)):
            for item in p.items:
                ac = _autocast_item(item, ctx)
                if ac is not None and not _disabled(ac):
                    ctx.report(node, None, line=p.lineno)
                    return


def _ancestors_until_function(node: ast.AST):
    p = parent(node)
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        yield p
        p = parent(p)


def _disabled(call: ast.Call) -> bool:
    en = kwarg(call, "enabled")
    return isinstance(en, ast.Constant) and en.value is False


_SCALER_CALL = re.compile(r"\b\w*scaler\w*\s*\(|\.scale\(", re.IGNORECASE)


@check("AMP007", ast.With, ast.AsyncWith)
def fp16_autocast_without_scaler(node: ast.AST, ctx) -> None:
    if "GradScaler" in ctx.text or "backward(" not in ctx.text or _SCALER_CALL.search(ctx.text):
        return  # a scaler the file calls: timm's NativeScaler or a project's loss_scaler(loss, optimizer), passed in
    for item in node.items:
        ac = _autocast_item(item, ctx)
        if ac is None or _disabled(ac):
            continue
        dtype = kwarg(ac, "dtype")
        if dtype is None and ctx.call_name(ac) in ("torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"):
            dtype = arg(ac, 1)
        dev = arg(ac, 0, "device_type") if ctx.call_name(ac) in ("torch.autocast", "torch.amp.autocast") else None
        if dev is not None and (ctx.resolve_str(dev) or "") == "cpu":
            continue  # CPU autocast is bfloat16
        if dtype is not None and "float16" not in ctx.segment(dtype).replace("bfloat16", "") and "half" not in ctx.segment(dtype):
            continue  # bfloat16 (or unknown): no loss scaling needed
        ctx.state(_Amp007).blocks.append(ac)
        return


@dataclass
class _Amp007:
    """float16 autocast blocks the walk saw."""

    blocks: list = field(default_factory=list)


@file_check("AMP007")
def fp16_autocast_without_scaler_report(ctx) -> None:
    st = ctx.peek_state(_Amp007)
    blocks = st.blocks if st is not None else None
    if blocks:  # one finding per file, at the first block
        ctx.report(min(blocks, key=lambda n: (n.lineno, n.col_offset)), None)
