"""Memory and data-loading rules (MEM): pinned memory, DataLoader workers, empty_cache, allocator options."""

from __future__ import annotations

import ast
import re
import sys
from functools import lru_cache
from importlib import resources
from dataclasses import dataclass
from typing import Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ascendify.rules.checks._util import fix, kwarg
from ascendify.rules.registry import check
from ascendify.semantic.bindings import ancestors, parent
from ascendify.semantic.torch_api import version_tuple

_LOADERS = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}


def _loader_call(node: ast.Call, ctx) -> bool:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    return name == "DataLoader" and ctx.call_name(node) in _LOADERS


def _is_cuda_literal(node: Optional[ast.AST]) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(re.match(r"^cuda(:\d+)?$", node.value))


# ---------------------------------------------------------------------- MEM001
@check("MEM001", ast.Call, names=("DataLoader",))
def pin_memory_device(node: ast.Call, ctx) -> None:
    if not node.keywords or not _loader_call(node, ctx):
        return
    dev = kwarg(node, "pin_memory_device")
    npu = ctx.settings.target == "npu"
    if _is_cuda_literal(dev):
        f = None
        if npu:
            f = fix(ctx.replace_string(dev, "npu"), ctx.add_import(), operation="pin memory for the NPU")
        else:
            seg = ctx.segment(node)
            if "\n" not in seg and "#" not in seg and all(k.arg for k in node.keywords):
                rest = [a for a in ctx.args_text(node) if not a.startswith("pin_memory_device=")]
                f = fix(ctx.set_args(node, ", ".join(rest)), operation="let pin_memory use the current accelerator")
        ctx.report(dev, f, detail=f"`pin_memory_device={dev.value!r}` pins host memory for CUDA; on Ascend pin for the NPU "
                                  "(torch ≥ 2.5 pins for the current accelerator when the argument is omitted)")
        return
    if dev is not None or not npu or version_tuple(ctx.settings.torch_npu) >= (2, 5):
        return
    pin = kwarg(node, "pin_memory")
    target = ctx.resolve(pin) if pin is not None else None
    if isinstance(target, ast.Constant) and target.value is True:
        ctx.report(pin, fix(ctx.add_keyword(node, 'pin_memory_device="npu"'), ctx.add_import(), operation="pin memory for the NPU"),
                   severity="silent",
                   detail=f"`pin_memory=True` without `pin_memory_device`: torch before 2.5 (target torch_npu {ctx.settings.torch_npu}) "
                          "pins only when CUDA is available, so pinning is silently off on Ascend")


# ---------------------------------------------------------------------- MEM002
def _assigned_name(node: ast.AST) -> str:
    p = parent(node)
    if isinstance(p, ast.Assign) and p.targets:
        t = p.targets[0]
        if isinstance(t, ast.Name):
            return t.id
        if isinstance(t, ast.Attribute):
            return t.attr
    return ""


_EVAL_NAME = re.compile(r"val|test|eval|infer|predict", re.IGNORECASE)


def _training_loader(node: ast.Call, ctx) -> bool:
    """Heuristic: shuffled, distributed-sampled or named ``train*`` — and not named or configured like evaluation."""
    target = _assigned_name(node)
    if target and _EVAL_NAME.search(target):
        return False
    shuffle = kwarg(node, "shuffle")
    if isinstance(shuffle, ast.Constant):
        if shuffle.value is True:
            return True
        if shuffle.value is False:
            return False
    sampler = kwarg(node, "sampler")
    if sampler is not None and "Distributed" in ctx.segment(sampler):
        return True
    ds = node.args[0] if node.args else kwarg(node, "dataset")
    names = [target, ctx.segment(ds) if ds is not None else ""]
    return any("train" in n.lower() for n in names)


@check("MEM002", ast.Call, names=("DataLoader",))
def loader_num_workers(node: ast.Call, ctx) -> None:
    if not _loader_call(node, ctx) or not _training_loader(node, ctx):
        return
    nw = kwarg(node, "num_workers")
    if nw is None:
        if len(node.args) > 6 or any(k.arg is None for k in node.keywords):
            return  # positional num_workers or **kwargs: cannot tell
        ctx.report(node, None, detail="no `num_workers` (0: batches are loaded in the training process)")
        return
    target = ctx.resolve(nw)
    if isinstance(target, ast.Constant) and target.value == 0 and target.value is not False:
        where = "" if target is nw else f" (default at {ctx.line_ref(target.lineno)})"
        ctx.report(nw, None, detail=f"`num_workers=0`{where}")


# ---------------------------------------------------------------------- MEM003
def _device_call_in(fn: ast.AST, ctx) -> Optional[ast.AST]:
    """A call in ``fn`` that puts a tensor on an accelerator (``.cuda()``, ``.npu()``, ``.to("cuda")``, ``device="npu"``)."""
    for n in ast.walk(fn):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        if isinstance(f, ast.Attribute) and f.attr in ("cuda", "npu") and ctx.qualname(f) is None:
            return n
        cands = [kwarg(n, "device")]
        if isinstance(f, ast.Attribute) and f.attr == "to" and n.args:
            cands.append(n.args[0])
        for c in cands:
            s = ctx.resolve_str(c) if c is not None else None
            if s and re.match(r"^(cuda|npu)\b", s):
                return n
    return None


@dataclass
class _DeviceDatasets:
    """Class name → the accelerator call in its ``__getitem__``."""

    by_class: dict


def _device_datasets(ctx) -> dict:
    """Class name → the accelerator call in its ``__getitem__`` (cached per file)."""
    return ctx.state(_DeviceDatasets, lambda c: _DeviceDatasets(_find_device_datasets(c))).by_class


def _find_device_datasets(ctx) -> dict:
    out = {}
    stack = [s for s in ctx.tree.body if isinstance(s, ast.ClassDef)]  # module-level and nested classes
    while stack:
        n = stack.pop()
        stack.extend(s for s in n.body if isinstance(s, ast.ClassDef))
        for item in n.body:
            if isinstance(item, ast.FunctionDef) and item.name == "__getitem__":
                hit = _device_call_in(item, ctx)
                if hit is not None:
                    out[n.name] = hit
    return out


@check("MEM003", ast.Call, names=("DataLoader",))
def device_dataset_workers(node: ast.Call, ctx) -> None:
    nw = kwarg(node, "num_workers")
    if nw is None or not _loader_call(node, ctx):
        return
    target = ctx.resolve(nw)
    if isinstance(target, ast.Constant) and target.value == 0:
        return
    classes = _device_datasets(ctx)
    if not classes:
        return
    ds = node.args[0] if node.args else kwarg(node, "dataset")
    ds = ctx.resolve(ds) if ds is not None else None
    if isinstance(ds, ast.Call) and isinstance(ds.func, ast.Name) and ds.func.id in classes:
        hit = classes[ds.func.id]
        ctx.report(nw, None, cls=ds.func.id, line=hit.lineno)


# ---------------------------------------------------------------------- MEM004
_EMPTY_CACHE = {"torch.cuda.empty_cache", "torch.npu.empty_cache", "torch_npu.npu.empty_cache",
                "torch.accelerator.memory.empty_cache", "torch.cuda.memory.empty_cache", "torch.npu.memory.empty_cache"}
_STEP_ITER = re.compile(r"loader|batch|data|step|iter", re.IGNORECASE)


@check("MEM004", ast.Call, names=("empty_cache",))
def empty_cache_in_loop(node: ast.Call, ctx) -> None:
    f = node.func
    if not (isinstance(f, ast.Attribute) and f.attr == "empty_cache"):
        return
    if ctx.call_name(node) not in _EMPTY_CACHE:
        return
    loops = []
    func = None
    for p in ancestors(node):
        if isinstance(p, (ast.For, ast.AsyncFor, ast.While)):
            loops.append(p)
        elif isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            func = p
            break
    if not loops:
        return
    inner = loops[0]
    head = ctx.segment(inner.iter) if isinstance(inner, (ast.For, ast.AsyncFor)) else ""
    if len(loops) >= 2 or _STEP_ITER.search(head):
        ctx.report(node, None, name=ctx.segment(f), where=_loop_where(inner, head, len(loops), func))


def _loop_where(inner: ast.AST, head: str, depth: int, func: Optional[ast.AST]) -> str:
    """Where the call is, in the code's own terms: "inside a loop over `loader` in `train`"."""
    if head and len(head) <= 40 and "\n" not in head:
        where = f"inside a loop over `{head}`"
    elif isinstance(inner, ast.While):
        where = "inside a `while` loop"
    else:
        where = "inside a loop"
    if depth >= 2:
        where = where.replace("inside a", "inside a nested", 1)
    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        where += f" in `{func.name}`"
    return where


# ---------------------------------------------------------------------- MEM005
@lru_cache(maxsize=1)
def alloc_conf_table() -> dict:
    text = resources.files("ascendify.rules").joinpath("data").joinpath("mem_alloc_conf.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


_CONF_NAMES = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NPU_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
_CONF_IN_SHELL = re.compile(r"\b(PYTORCH_(?:CUDA_|NPU_)?ALLOC_CONF)=([\"']?)([^\s\"';&|]+)\2")


def _conf_problems(value: str) -> list:
    table = alloc_conf_table()
    opts = {}
    for part in value.split(","):
        if not part.strip():
            continue
        key, _, val = part.partition(":")
        opts[key.strip()] = val.strip()
    out = []
    for key in opts:
        if key in table["cuda_only"]:
            out.append(f"`{key}`: {table['cuda_only'][key]}")
        elif key in table["npu"]:
            if table["npu"][key]:
                out.append(f"`{key}`: {table['npu'][key]}")
        else:
            out.append(f"`{key}` is not an NPU allocator option (known: {', '.join(table['npu'])})")
    for c in table.get("conflicts", []):
        if opts.get(c["option"], "").lower() == c["value"] and any(w in opts for w in c["with"]):
            out.append(c["note"])
    return out


def _conf_value(node: ast.Constant) -> Optional[ast.AST]:
    """The value written for an allocator-config variable named by ``node``."""
    p = parent(node)
    if isinstance(p, ast.Subscript):
        gp = parent(p)
        if isinstance(gp, ast.Assign) and p in gp.targets:
            return gp.value
        return None
    if isinstance(p, ast.Call) and len(p.args) >= 2 and p.args[0] is node:
        f = p.func
        if isinstance(f, ast.Attribute) and f.attr in ("setdefault", "putenv", "__setitem__"):
            return p.args[1]
        return None
    if isinstance(p, ast.Dict):
        for k, v in zip(p.keys, p.values):
            if k is node:
                return v
    return None


@check("MEM005", ast.Constant)
def alloc_conf_options(node: ast.Constant, ctx) -> None:
    v = node.value
    if type(v) is not str or "ALLOC_CONF" not in v:
        return
    if v in _CONF_NAMES:
        val = _conf_value(node)
        if isinstance(val, ast.Constant) and isinstance(val.value, str):
            problems = _conf_problems(val.value)
            if problems:
                ctx.report(val, None, var=v, detail="; ".join(problems))
        return
    if isinstance(parent(node), ast.Expr):
        return  # docstring
    for m in _CONF_IN_SHELL.finditer(v):
        problems = _conf_problems(m.group(3))
        if problems:
            ctx.report(node, None, var=m.group(1), detail="; ".join(problems))
            return


# ---------------------------------------------------------------------- MEM006
@check("MEM006", ast.Call, names=("DataLoader",))
def loader_persistent_workers(node: ast.Call, ctx) -> None:
    nw = kwarg(node, "num_workers")
    if nw is None or kwarg(node, "persistent_workers") is not None or not _loader_call(node, ctx):
        return
    if any(k.arg is None for k in node.keywords):
        return  # **kwargs may set it
    target = ctx.resolve(nw)
    if isinstance(target, ast.Constant) and (not isinstance(target.value, int) or target.value == 0):
        return
    if not _training_loader(node, ctx):
        return
    ctx.report(node, None)
