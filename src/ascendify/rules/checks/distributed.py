"""Distributed rules (DST): NCCL backend and variables, process-group set-up, DataParallel, launchers.

NPU facts come from the reference notes (``migration-tools.md`` §3.1/§3.3,
``accuracy-profiling-atc.md`` §5.5) and the Ascend "PyTorch native API
support" tables (``data/native_api_docs``); each rule page cites its source.
"""

from __future__ import annotations

import ast
import re
import sys
from functools import lru_cache
from importlib import resources
from dataclasses import dataclass, field
from typing import Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ascendify.rules.checks import agnostic as agn
from ascendify.rules.checks._util import arg, fix, kwarg, torch_root
from ascendify.rules.registry import check, file_check, last_parts
from ascendify.semantic.bindings import ancestors, parent
from ascendify.semantic.torch_api import PROCESS_GROUP_CALLS

# ---------------------------------------------------------------------- shared
_INIT = PROCESS_GROUP_CALLS  # process-group constructors → position of their ``backend`` argument

_BACKEND_NCCL = {"torch.distributed.Backend.NCCL", "torch.distributed.distributed_c10d.Backend.NCCL"}
_ENV_GETTERS = {"os.environ.get", "os.getenv", "os.environ.setdefault"}


def _dist_name(ctx) -> Optional[str]:
    """How the file spells ``torch.distributed`` (``dist``, ``torch.distributed``), or None."""
    for local, full in ctx.aliases.items():
        if full == "torch.distributed":
            return local
    t = torch_root(ctx)
    return f"{t}.distributed" if t else None


def _agnostic_backend(ctx) -> Optional[tuple]:
    """(prelude edit, expression text) for the default backend of ``DEVICE_TYPE``, or None."""
    pre = agn.prelude(ctx)
    d = _dist_name(ctx)
    if pre is None or d is None:
        return None
    return pre, f"{d}.get_default_backend_for_device({agn.NAME})"


def _hccl_value(value: str) -> str:
    """``"nccl"`` → ``"hccl"``, ``"cpu:gloo,cuda:nccl"`` → ``"cpu:gloo,npu:hccl"`` (case kept)."""
    out = re.sub(r"cuda(?=\s*:\s*nccl)", "npu", value, flags=re.IGNORECASE)
    out = out.replace("nccl", "hccl").replace("NCCL", "HCCL").replace("Nccl", "Hccl")
    return out


def _is_nccl_str(value: object) -> bool:
    if not isinstance(value, str):
        return False
    v = value.strip().lower()
    return v == "nccl" or (":" in v and any(p.split(":")[-1].strip() == "nccl" for p in v.split(",")))


def _plain_string(node: ast.AST) -> bool:
    """A string literal the fixer can rewrite (not an f-string part, not implicitly concatenated)."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and not isinstance(parent(node), ast.JoinedStr)


def _backend_source(val: ast.AST, ctx) -> Optional[ast.AST]:
    """The literal or ``Backend.NCCL`` behind a backend argument (through names, argparse, env defaults)."""
    target = ctx.resolve(val)
    if isinstance(target, ast.Call) and ctx.call_name(target) in _ENV_GETTERS and len(target.args) >= 2:
        target = ctx.resolve(target.args[1])
    return target


# ---------------------------------------------------------------------- DST001
@check("DST001", ast.Call, names=("init_process_group", "new_group"))
def nccl_backend(node: ast.Call, ctx) -> None:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if name not in ("init_process_group", "new_group"):
        return
    pos = _INIT.get(ctx.call_name(node) or "")
    if pos is None:
        return
    val = arg(node, pos, "backend")
    if val is None:
        return
    src = _backend_source(val, ctx)
    is_enum = isinstance(src, ast.Attribute) and ctx.qualname(src) in _BACKEND_NCCL
    if not is_enum and not (isinstance(src, ast.Constant) and _is_nccl_str(src.value)):
        # through the model: a conditional choice (`"nccl" if use_gpu else "gloo"`), `args.backend = "nccl"`
        for lit, choice in ctx.model.values.sources(val):
            if isinstance(lit, ast.Constant) and _is_nccl_str(lit.value) and not _nccl_or_fallback(choice, ctx):
                _report_literal(lit, ctx, name, node)
        return
    where = "" if src is val else f" (flows into `{name}` at {ctx.line_ref(node.lineno)})"
    argdef = ctx.arg_default_for(val)
    what = f"argparse default of `--{argdef.dest.replace('_', '-')}`" if argdef is not None else "backend"
    mixed = not is_enum and src.value.strip().lower() != "nccl"
    f_ = None
    if ctx.settings.target == "npu":
        if is_enum:
            f_ = fix(ctx.replace(src, '"hccl"'), ctx.add_import(), operation="use the HCCL backend")
        elif _plain_string(src):
            edits = [ctx.replace_string(src, _hccl_value(src.value))]
            choices = kwarg(argdef.call, "choices") if argdef is not None else None
            if isinstance(choices, (ast.List, ast.Tuple, ast.Set)):  # keep "--dist-backend hccl" accepted
                edits += [ctx.replace_string(c, _hccl_value(c.value)) for c in choices.elts
                          if isinstance(c, ast.Constant) and _is_nccl_str(c.value) and _plain_string(c)]
            f_ = fix(*edits, ctx.add_import(), operation="use the HCCL backend")
    elif argdef is not None and src is argdef.node:
        # an argparse default: None lets init_process_group pick the backend of the current accelerator
        f_ = fix(ctx.replace(src, "None"), operation="let torch choose the backend for the device")
    else:
        ab = _agnostic_backend(ctx)
        if ab is not None and (is_enum or _plain_string(src)):
            pre, text = ab
            # "cpu:gloo,cuda:nccl" also asked for gloo on CPU tensors: dropping that needs review
            f_ = fix(ctx.replace(src, text), pre, safe=not mixed, operation="use the default backend of the current accelerator")
    ctx.report(src, f_, what=what, value="Backend.NCCL" if is_enum else repr(src.value), where=where)


def _nccl_or_fallback(ifexp: ast.AST, ctx) -> bool:
    """``"nccl" if dist.is_nccl_available() else "gloo"``: DST002's (it rewrites the whole choice)."""
    if not isinstance(ifexp, ast.IfExp):
        return False
    t = ifexp.test
    return isinstance(t, ast.Call) and (ctx.call_name(t) or "").endswith("is_nccl_available")


def _report_literal(lit: ast.Constant, ctx, name: str, call: ast.Call) -> None:
    """DST001 at a backend literal found through the model, with the same fixes as a direct one."""
    mixed = lit.value.strip().lower() != "nccl"
    f_ = None
    if _plain_string(lit):
        if ctx.settings.target == "npu":
            f_ = fix(ctx.replace_string(lit, _hccl_value(lit.value)), ctx.add_import(), operation="use the HCCL backend")
        else:
            ab = _agnostic_backend(ctx)
            if ab is not None:
                pre, text = ab
                f_ = fix(ctx.replace(lit, text), pre, safe=not mixed, operation="use the default backend of the current accelerator")
    ctx.report(lit, f_, what="backend", value=repr(lit.value), where=f" (flows into `{name}` at {ctx.line_ref(call.lineno)})")


@file_check("DST001")
def nccl_backend_option(ctx) -> None:
    """argparse ``--*backend`` options defaulting to NCCL whose use is in another file (e.g. config.py)."""
    for dest, d in ctx.arg_defaults.items():
        if "backend" not in dest or not (isinstance(d.node, ast.Constant) and _is_nccl_str(d.value)):
            continue
        f_ = None
        if ctx.settings.target == "npu":
            if _plain_string(d.node):
                # no `import torch_npu` here: the process group is created in another file
                f_ = fix(ctx.replace_string(d.node, _hccl_value(d.value)), operation="use the HCCL backend")
        else:
            f_ = fix(ctx.replace(d.node, "None"), operation="let torch choose the backend for the device")
        ctx.report(d.node, f_, what=f"argparse default of `--{dest.replace('_', '-')}`", value=repr(d.value),
                   where=" (a process-group backend option)")


# ---------------------------------------------------------------------- DST002
def _in_backend_arg(node: ast.AST, ctx) -> bool:
    """True if ``node`` is (inside) the backend argument of a process-group constructor."""
    for p in ancestors(node):
        if isinstance(p, ast.Call):
            pos = _INIT.get(ctx.call_name(p) or "")
            return pos is not None
        if isinstance(p, ast.stmt):
            return False
    return False


@check("DST002", ast.Compare)
def nccl_backend_compare(node: ast.Compare, ctx) -> None:
    for side in (node.left, *node.comparators):
            if isinstance(side, ast.Constant) and isinstance(side.value, str) and side.value.strip().lower() == "nccl":
                f_ = None
                if ctx.settings.target == "npu" and _plain_string(side):
                    f_ = fix(ctx.replace_string(side, _hccl_value(side.value)), ctx.add_import(), safe=False,
                             operation="compare with the HCCL backend")
                ctx.report(side, f_, what=f"comparison with {side.value!r}")


@check("DST002", ast.Attribute, names=("NCCL",))
def nccl_backend_enum(node: ast.Attribute, ctx) -> None:
    if node.attr != "NCCL" or ctx.qualname(node) not in _BACKEND_NCCL:
        return
    if _in_backend_arg(node, ctx):
        return  # DST001
    if isinstance(parent(node), ast.Compare):
        f_ = None
        if ctx.settings.target == "npu":
            f_ = fix(ctx.replace(node, '"hccl"'), ctx.add_import(), safe=False, operation="compare with the HCCL backend")
        ctx.report(node, f_, what="comparison with `Backend.NCCL`")
    else:
        ctx.report(node, None, what="`Backend.NCCL`")


@check("DST002", ast.Call, names=("is_nccl_available",))
def nccl_available(node: ast.Call, ctx) -> None:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if name == "is_nccl_available" and (ctx.call_name(node) or "").startswith("torch.distributed"):
        ctx.report(node, _nccl_or_fallback_fix(node, ctx), what="`is_nccl_available()` (False on an Ascend host)")


def _nccl_or_fallback_fix(node: ast.Call, ctx):
    """``"nccl" if dist.is_nccl_available() else "gloo"`` (the backend choice of many DDP scripts): on Ascend it
    picks gloo.  npu: ``"hccl"``; agnostic: ``dist.get_default_backend_for_device(DEVICE_TYPE)`` (gloo on the
    CPU, nccl on CUDA, hccl on Ascend).  Anything else stays a report."""
    choice = parent(node)
    if not (isinstance(choice, ast.IfExp) and choice.test is node):
        return None
    body, other = choice.body, choice.orelse
    if not (_plain_string(body) and body.value.strip().lower() == "nccl" and _plain_string(other)):
        return None
    if ctx.settings.target == "npu":
        return fix(ctx.replace(choice, _quoted_like(ctx, body, "hccl")), ctx.add_import(), operation="use the HCCL backend")
    ab = _agnostic_backend(ctx)
    if ab is None:
        return None
    pre, expr = ab
    return fix(ctx.replace(choice, expr), pre, operation="the default backend of DEVICE_TYPE")


def _quoted_like(ctx, node: ast.Constant, value: str) -> str:
    seg = ctx.segment(node)
    q = seg[-1] if seg and seg[-1] in "\"'" else '"'
    return f"{q}{value}{q}"


# ---------------------------------------------------------------------- DST003
@lru_cache(maxsize=1)
def nccl_env_table() -> tuple[dict, dict]:
    """(NCCL variable → entry, default entry) from ``nccl_hccl_env.toml``."""
    text = resources.files("ascendify.rules").joinpath("data").joinpath("nccl_hccl_env.toml").read_text(encoding="utf-8")
    doc = tomllib.loads(text)
    return {v["nccl"]: v for v in doc.get("var", [])}, doc["default"]


_ENV_NAME = re.compile(r"^(?:TORCH_)?NCCL_[A-Z0-9_]+$")
_SHELLISH = re.compile(r"\bexport\b|\bunset\b|&&|;|\b(?:python3?|torchrun|srun|mpirun|deepspeed|bash|sh)\b")
_ENV_IN_SHELL = re.compile(r"(?<![A-Za-z0-9_$])((?:TORCH_)?NCCL_[A-Z0-9_]+)(?==|\b)")


def _is_docstring(node: ast.Constant) -> bool:
    return isinstance(parent(node), ast.Expr)


@check("DST003", ast.Constant)
def nccl_env_var(node: ast.Constant, ctx) -> None:
    v = node.value
    if type(v) is not str or "NCCL_" not in v or _is_docstring(node):
        return
    table, default = nccl_env_table()
    if _ENV_NAME.match(v):
        names = [v]
    elif _SHELLISH.search(v) or re.match(r"\s*(?:TORCH_)?NCCL_", v):
        # a shell command or env-file text: "NCCL_DEBUG=INFO torchrun ...", "export NCCL_..."
        names = [m.group(1) for m in _ENV_IN_SHELL.finditer(v) if _looks_like_env_use(v, m)]
        names = list(dict.fromkeys(names))
    else:
        return  # prose ("set NCCL_DEBUG=INFO to debug") is not configuration
    if not names:
        return
    entries = [table.get(n) for n in names]
    parts = []
    for n, e in zip(names, entries):
        if e is None:
            parts.append(f"{n}: {default['advice']}")
        elif e["hccl"] and e["rename"]:
            parts.append(f"{n} → {e['hccl']} ({e['advice']})")
        else:
            parts.append(f"{n}: {e['advice']}")
    f_ = None
    if ctx.settings.target == "npu" and _plain_string(node) and all(e is not None and e["rename"] for e in entries):
        new = v
        for n, e in zip(names, entries):
            new = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", e["hccl"], new)
        f_ = fix(ctx.replace_string(node, new), safe=False, operation="rename NCCL variable to its HCCL counterpart")
    ctx.report(node, f_, detail="; ".join(parts))


def _looks_like_env_use(text: str, m: re.Match) -> bool:
    """``NCCL_X=...``, ``export NCCL_X``, ``$NCCL_X`` / ``${NCCL_X}``, ``unset NCCL_X``."""
    end = m.end()
    if end < len(text) and text[end] == "=":
        return True
    before = text[: m.start()].rstrip()
    return before.endswith(("export", "unset", "${", "$")) or text[max(0, m.start() - 1): m.start()] in ("$", "{")


# ---------------------------------------------------------------------- DST004
_GUARD = re.compile(r"\bis_initialized\b")


def _guarded(node: ast.Call, ctx) -> bool:
    """An ``is_initialized()`` test encloses the call, or precedes it in the same function."""
    for p in ancestors(node):
        if isinstance(p, (ast.If, ast.IfExp, ast.While)) and _GUARD.search(ctx.segment(p.test)):
            return True
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # `if dist.is_initialized(): return` earlier in the function
            for stmt in p.body:
                if getattr(stmt, "lineno", 0) >= node.lineno:
                    break
                if isinstance(stmt, ast.If) and _GUARD.search(ctx.segment(stmt.test)):
                    return True
            return False
    return False


@check("DST004", ast.Call, names=("init_process_group",))
def init_unguarded(node: ast.Call, ctx) -> None:
    f = node.func
    if (f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None) != "init_process_group":
        return
    if ctx.call_name(node) not in _INIT:
        return
    ctx.state(_Dst004).calls.append((node, _guarded(node, ctx)))


@dataclass
class _Dst004:
    """``init_process_group`` calls the walk saw: (call, guarded)."""

    calls: list = field(default_factory=list)


@file_check("DST004")
def init_unguarded_report(ctx) -> None:
    st = ctx.peek_state(_Dst004)
    calls = st.calls if st is not None else None
    if not calls:
        return
    sides = {id(n): _branch_sides(n) for n, _ in calls}
    for node, guarded in calls:
        if guarded:
            continue
        # a call in the other branch of an `if`/`else` (gloo here, the accelerator backend there) never runs with this one
        others = sorted(n.lineno for n, _ in calls if n is not node and not _exclusive(sides[id(n)], sides[id(node)]))
        if ctx.in_loop(node):
            ctx.report(node, None, severity="warning", why="it is inside a loop")
        elif others:
            lines = ", ".join(ctx.line_ref(n) for n in others[:3]) + (", …" if len(others) > 3 else "")
            ctx.report(node, None, why=f"the file calls it again ({lines}); make sure only one call runs")
        elif not (_entry_script(ctx) or _module_level(node, ctx)):
            # a script's one call, or one at module level (a module's body runs once per process: imports are
            # cached), runs once per process: only a function's call may run twice
            ctx.report(node, None, why="a second call (from a library, a notebook re-run or a retry) fails")


def _entry_script(ctx) -> bool:
    """A top-level script (``if __name__ == "__main__":``), not a notebook and not a module others import."""
    if ctx.src.is_notebook:
        return False
    for stmt in ctx.tree.body:
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare) and isinstance(stmt.test.left, ast.Name) \
                and stmt.test.left.id == "__name__":
            return True
    return False


def _module_level(node: ast.AST, ctx) -> bool:
    """``node`` runs in the module's body (no enclosing function or class), in a file that is not a notebook."""
    if ctx.src.is_notebook:
        return False
    return not any(isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) for a in ancestors(node))


def _branch_sides(node: ast.AST) -> dict:
    """id(enclosing If) → "body" / "orelse": which branch of each enclosing ``if`` holds ``node``."""
    out = {}
    child = node
    for a in ancestors(node):
        if isinstance(a, ast.If):
            if any(st is child for st in a.body):
                out[id(a)] = "body"
            elif any(st is child for st in a.orelse):
                out[id(a)] = "orelse"
        child = a
    return out


def _exclusive(a: dict, b: dict) -> bool:
    return any(k in b and b[k] != side for k, side in a.items())


# ---------------------------------------------------------------------- DST005
_DP = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel",
       "torch.nn.parallel.data_parallel", "torch.nn.parallel.data_parallel.data_parallel"}


@check("DST005", ast.Call, names=last_parts(_DP))
def data_parallel(node: ast.Call, ctx) -> None:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if name not in ("DataParallel", "data_parallel") and not name.endswith("DataParallel"):
        return
    qn = ctx.call_name(node)
    if qn in _DP:
        ctx.report(node, None, name=qn.rsplit(".", 1)[-1])


# ---------------------------------------------------------------------- DST006
_PG_NCCL = ("torch.distributed.ProcessGroupNCCL", "torch.distributed.distributed_c10d.ProcessGroupNCCL",
            "torch._C._distributed_c10d.ProcessGroupNCCL", "torch.cuda.nccl")


def _nccl_api(qn: Optional[str]) -> bool:
    return qn is not None and any(qn == p or qn.startswith(p + ".") for p in _PG_NCCL)


@check("DST006", ast.Attribute, names=("ProcessGroupNCCL", "nccl"))
@check("DST006", ast.ImportFrom, ast.Import)
def nccl_api(node: ast.AST, ctx) -> None:
    if isinstance(node, ast.Attribute):
        if node.attr not in ("ProcessGroupNCCL", "nccl"):
            return
        if not _nccl_api(ctx.qualname(node)):
            return
        ctx.report(node, None, name=ctx.qualname(node))
        return
    if isinstance(node, ast.ImportFrom):
        if not node.module or node.level:
            return
        for a in node.names:
            if _nccl_api(f"{node.module}.{a.name}") or _nccl_api(node.module):
                ctx.report(node, None, name=f"{node.module}.{a.name}")
                return
        return
    for a in node.names:
        if _nccl_api(a.name):
            ctx.report(node, None, name=a.name)
            return


# ---------------------------------------------------------------------- DST007
_LAUNCH_STR = re.compile(r"-m\s+torch\.distributed\.launch\b")


@check("DST007", ast.Constant)
def distributed_launch_string(node: ast.Constant, ctx) -> None:
    v = node.value
    if type(v) is str and "torch.distributed.launch" in v and _LAUNCH_STR.search(v) and not _is_docstring(node):
        ctx.report(node, None, what="`python -m torch.distributed.launch`")


@check("DST007", ast.Import, ast.ImportFrom)
@check("DST007", ast.Call, names=("add_argument",))
def distributed_launch(node: ast.AST, ctx) -> None:
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "add_argument":
            _local_rank_arg(node, ctx)
        return
    if isinstance(node, ast.Import):
        if any(a.name == "torch.distributed.launch" for a in node.names):
            ctx.report(node, None, what="`torch.distributed.launch`")
        return
    if isinstance(node, ast.ImportFrom) and (
        node.module == "torch.distributed.launch"
        or (node.module == "torch.distributed" and any(a.name == "launch" for a in node.names))
    ):
        ctx.report(node, None, what="`torch.distributed.launch`")


def _local_rank_arg(node: ast.Call, ctx) -> None:
    opts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not any(o in ("--local_rank", "--local-rank") for o in opts):
        return
    if "LOCAL_RANK" in ctx.text:  # the script already reads the variable torchrun sets
        return
    default = kwarg(node, "default")
    f_ = None
    if isinstance(default, ast.Constant) and type(default.value) is int:
        # torch.distributed.launch still passes --local_rank (overriding the default); torchrun sets LOCAL_RANK
        os_name = next((local for local, full in ctx.aliases.items() if full == "os"), None)
        edits = [ctx.replace(default, f'int({os_name or "os"}.environ.get("LOCAL_RANK", {default.value}))')]
        if os_name is None:
            edits.append(ctx.add_import("import os"))
        f_ = fix(*edits, operation="default --local_rank to $LOCAL_RANK")
    ctx.report(node, f_, what="a `--local_rank` argument")


# ---------------------------------------------------------------------- DST008
_LIB_BACKEND_KW = ("ddp_backend", "dist_backend", "process_group_backend")
"""Keyword names third-party trainers use for the process-group backend
(transformers ``TrainingArguments``, DeepSpeed ``init_distributed``, Lightning ``DDPStrategy``)."""


@check("DST008", ast.keyword, ast.Dict)
def nccl_backend_library(node: ast.AST, ctx) -> None:
    if isinstance(node, ast.keyword):
        if node.arg not in _LIB_BACKEND_KW:
            return
        pairs = [(node.arg, node.value)]
    else:
        pairs = [(k.value, v) for k, v in zip(node.keys, node.values)
                 if isinstance(k, ast.Constant) and k.value in _LIB_BACKEND_KW]
    for name, val in pairs:
        if not (isinstance(val, ast.Constant) and _is_nccl_str(val.value)):
            continue
        f_ = None
        if _plain_string(val):
            if ctx.settings.target == "npu":
                f_ = fix(ctx.replace_string(val, _hccl_value(val.value)), ctx.add_import(), operation="use the HCCL backend")
            else:
                f_ = fix(ctx.replace(val, "None"), safe=False, operation="let the library choose the backend")
        ctx.report(val, f_, name=name, value=repr(val.value))


# ---------------------------------------------------------------------- DST009
_FSDP = {"torch.distributed.fsdp.FullyShardedDataParallel",
         "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel"}
_ORDINAL_NAME = re.compile(r"rank|gpu|local|idx|index|device_id|dev_id|ordinal", re.IGNORECASE)


def _device_ordinal(node: ast.AST, ctx) -> bool:
    """An int device index (``0``, ``local_rank``, ``torch.cuda.current_device()``), not a ``torch.device``/string."""
    target = ctx.resolve(node)
    if isinstance(target, ast.Constant):
        return type(target.value) is int
    if isinstance(target, ast.Call):
        f = target.func
        return isinstance(f, ast.Attribute) and f.attr == "current_device" or (
            isinstance(f, ast.Name) and f.id == "int")
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return bool(_ORDINAL_NAME.search(ctx.segment(node))) and "device(" not in ctx.segment(node)
    return False


@check("DST009", ast.Call, names=last_parts(_FSDP))
def fsdp_device_id(node: ast.Call, ctx) -> None:
    if not node.keywords:
        return
    val = kwarg(node, "device_id")
    if val is None or ctx.call_name(node) not in _FSDP or not _device_ordinal(val, ctx):
        return
    t = torch_root(ctx)
    text = ctx.segment(val)
    f_ = None
    if t is not None and "\n" not in text:
        if ctx.settings.target == "npu":
            f_ = fix(ctx.replace(val, f'{t}.device("npu", {text})'), ctx.add_import(), operation="pass an NPU torch.device")
        else:
            pre = agn.prelude(ctx)
            if pre is not None:
                f_ = fix(ctx.replace(val, f"{t}.device({agn.NAME}, {text})"), pre, operation="pass a torch.device on DEVICE_TYPE")
    ctx.report(val, f_, value=text)
