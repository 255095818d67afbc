"""Newer device-type APIs and "not CPU means CUDA" flags (issue 20 item 6).

* DST012: ``init_device_mesh("cuda", ...)`` / ``DeviceMesh("cuda", ...)`` (FSDP2, tensor parallel);
* DEV010 (extended): ``torch.cuda.memory._record_memory_history`` / ``_snapshot`` / ``_dump_snapshot``,
  whose NPU versions live in ``torch.npu.memory`` from the releases ``newer_apis.toml`` names;
* DEV007 (extended): ``torch.backends.cuda.is_built()``, False with Ascend's CPU build of torch;
* DEV027: a flag that means "not the CPU" (``cuda = device.type != "cpu"``) guarding CUDA-only work,
  which then runs on an Ascend NPU: reported where the flag is used, its definition as related location.

The facts and their sources are in ``rules/data/newer_apis.toml`` (rule pages and the
memory-history table).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

from ascendify.rules.checks._util import arg, fix
from ascendify.rules.checks.device import cuda_literal, literal_edits, literal_owner, torch_name
from ascendify.rules.registry import check, file_check, tomllib
from ascendify.semantic.bindings import parent


@lru_cache(maxsize=1)
def _data() -> dict:
    from importlib import resources

    text = resources.files("ascendify.rules").joinpath("data").joinpath("newer_apis.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


# ---------------------------------------------------------------------- DST012
MESH_CALLS = frozenset({
    "torch.distributed.device_mesh.init_device_mesh", "torch.distributed.init_device_mesh",
    "torch.distributed.tensor.init_device_mesh", "torch.distributed._tensor.init_device_mesh",
    "torch.distributed.device_mesh.DeviceMesh", "torch.distributed.DeviceMesh",
    "torch.distributed.tensor.DeviceMesh", "torch.distributed._tensor.DeviceMesh",
})
"""Where ``init_device_mesh`` / ``DeviceMesh`` are importable from (checked with torch 2.13)."""


@check("DST012", ast.Call, names=("init_device_mesh", "DeviceMesh"))
def device_mesh_cuda(node: ast.Call, ctx) -> None:
    q = ctx.call_name(node)
    if q not in MESH_CALLS:
        return
    dev = arg(node, 0, "device_type")
    if not (isinstance(dev, ast.Constant) and dev.value == "cuda"):
        return  # "cuda" held in a name is DEV024's (at the literal); a cuda-or-cpu choice is DEV007's
    edits = literal_edits(ctx, dev, ctx.settings.target)
    f = fix(*edits, operation="build the device mesh on the target device") if edits else None
    ctx.report(dev, f, call=q.rsplit(".", 1)[-1])


# ---------------------------------------------------------------------- DEV010: memory history
_POST = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.?(post|rc|a|b|dev)(\d+))?")


def release_key(version: Optional[str]) -> tuple:
    """``"2.1.0.post4"`` → ``(2, 1, 0, 4)``, ``"2.1.0"`` → ``(2, 1, 0, 0)``, ``"2.1.0.rc1"`` → ``(2, 1, 0, -1)``
    (a pre-release sorts before its release); unparsable → ``(0, 0, 0, 0)``."""
    m = _POST.match(str(version or "").strip())
    if not m:
        return (0, 0, 0, 0)
    tail = 0
    if m.group(4) == "post":
        tail = int(m.group(5))
    elif m.group(4):
        tail = -1
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0), tail)


def memory_history_on_npu(torch_npu: Optional[str]) -> bool:
    """The torch_npu release has ``torch.npu.memory._record_memory_history/_snapshot/_dump_snapshot``
    (the first release of each torch line that has them: ``newer_apis.toml`` ``[memory_history].since``)."""
    key = release_key(torch_npu)
    since = sorted(release_key(v) for v in _data()["memory_history"]["since"])
    for first in since:
        if key[:2] == first[:2]:
            return key >= first
    return key[:2] > since[-1][:2]


def _memory_api(node, ctx) -> Optional[str]:
    """``_record_memory_history`` etc. when ``node`` names ``torch.cuda.memory.<it>``."""
    q = ctx.qualname(node)  # also an alias: `from torch.cuda.memory import _record_memory_history as rec`
    if q is None or not q.startswith("torch.cuda.memory."):
        return None
    name = q[len("torch.cuda.memory."):]
    return name if name in _data()["memory_history"]["api"] else None


def _cuda_attr(node: ast.AST, ctx) -> Optional[ast.Attribute]:
    """The ``.cuda`` of ``torch.cuda.memory.X`` as written (None when the chain starts at an imported
    ``cuda`` / ``memory`` name: no rename of it alone is right)."""
    n = node.value if isinstance(node, ast.Attribute) else None
    while isinstance(n, ast.Attribute):
        if n.attr == "cuda" and ctx.qualname(n) == "torch.cuda":
            return n
        n = n.value
    return None


def _args_fit(call: Optional[ast.Call], params: list) -> bool:
    """The call passes only what torch_npu's version takes (positions and names of ``params``), and
    no legacy ``enabled=True/False`` (torch < 2.1's boolean form, which torch_npu's does not read)."""
    if call is None:
        return True
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    if len(call.args) > len(params) or any(k.arg not in params for k in call.keywords):
        return False
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == params[0]), None)
    return not (isinstance(first, ast.Constant) and isinstance(first.value, bool))


@check("DEV010", ast.Attribute, ast.Name, names=("_record_memory_history", "_snapshot", "_dump_snapshot"))
def cuda_memory_history(node, ctx) -> None:
    if not isinstance(node.ctx, ast.Load):
        return
    name = _memory_api(node, ctx)
    if name is None:
        return
    entry = _data()["memory_history"]["api"][name]
    p = parent(node)
    call = p if isinstance(p, ast.Call) and p.func is node else None
    on_npu = memory_history_on_npu(ctx.settings.torch_npu)
    note = "raises on an Ascend host (AttributeError: Ascend's CPU build of torch has no CUDA memory history)"
    if not on_npu:
        note += f"; torch_npu {ctx.settings.torch_npu} has no NPU version (from {', '.join(_data()['memory_history']['since'])})"
    f = None
    if ctx.settings.target == "npu" and on_npu:
        cuda = _cuda_attr(node, ctx)
        if cuda is not None and _args_fit(call, entry["params"]):
            f = fix(ctx.rename_attr(cuda, "npu"), ctx.add_import(), operation="record memory history on the NPU")
    agnostic = f"`torch.get_device_module(DEVICE_TYPE).memory.{name}` on CUDA and Ascend (no `torch.accelerator` version)"
    ctx.report(node, f, severity="error", api=f"torch.cuda.memory.{name}", note=note, npu=f"memory.{name}", agnostic=agnostic)


# ---------------------------------------------------------------------- DEV007: is_built
@check("DEV007", ast.Call, names=("is_built",))
def cuda_is_built(node: ast.Call, ctx) -> None:
    if ctx.call_name(node) != "torch.backends.cuda.is_built":
        return
    t = torch_name(ctx, node.func)
    f = None
    if ctx.settings.target == "npu" and t is not None and not node.args and not node.keywords:
        # unsafe: a different question (is an NPU there, not was torch built for it)
        f = fix(ctx.replace(node, f"{t}.npu.is_available()"), ctx.add_import(), safe=False,
                operation="test for an NPU instead of a CUDA build")
    msg = ("`torch.backends.cuda.is_built()` is False with Ascend's torch (a CPU build; torch_npu adds the NPU): "
           "the CUDA branch is silently skipped")
    if ctx.settings.target == "npu":
        msg += "; on Ascend test `torch.npu.is_available()`"
    else:
        msg += "; device-agnostic: `torch.accelerator.is_available()` (it asks whether a device is there, not how torch was built)"
    ctx.report(node, f, message=msg)


# ---------------------------------------------------------------------- DEV027: "not CPU" flags
@dataclass
class _FlagUses:
    """Guards and arguments of this file whose value is a "not the CPU" flag: (use node, truth, region)."""

    uses: list = field(default_factory=list)


_CPU_TEST = re.compile(r"""[!=]=\s*["']cpu["']|["']cpu["']\s*[!=]=""")


@dataclass
class _CpuTests:
    """The file compares something with ``"cpu"`` (else no flag can mean "not the CPU": the checks stop at once)."""

    present: bool


def _may_have_flags(ctx) -> bool:
    return ctx.state(_CpuTests, lambda c: _CpuTests(_CPU_TEST.search(c.text) is not None)).present


def _is_flag(test: ast.AST) -> bool:
    """``cuda`` / ``self.use_gpu`` / ``args.cuda`` / ``not cpu``: a name for a test, not the test."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return isinstance(test, (ast.Name, ast.Attribute))


def _not_cpu(test: ast.AST, ctx):
    """The model's truth of ``test`` when it is a "not the CPU" flag true on an Ascend NPU, else None."""
    if not _is_flag(test):
        return None
    t = ctx.model.branches.truth(test)
    if t.kind != "cpu" or t.value is not True or t.origin is None:
        return None
    if _inside(t.origin, test):
        return None
    return t


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    n = node
    while n is not None:
        if n is outer:
            return True
        n = getattr(n, "_asc_parent", None)
    return False


def _guarded(ctx, test: ast.AST, region) -> None:
    """Record ``test`` (an ``if`` test, conditional test or ``and`` operand) guarding ``region`` if it is a flag."""
    operands = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for op in operands:
        t = _not_cpu(op, ctx)
        if t is None:
            continue
        others = [o for o in operands if o is not op]
        if any(ctx.model.branches.truth(o).value is False for o in others):
            continue  # `cuda and torch.cuda.device_count() > 1`: false on an NPU, the region does not run
        ctx.state(_FlagUses).uses.append((op, t, region))


@check("DEV027", ast.If, ast.IfExp)
def not_cpu_flag_guard(node, ctx) -> None:
    if not _may_have_flags(ctx):
        return
    _guarded(ctx, node.test, node.body if isinstance(node, ast.If) else [node.body])


@check("DEV027", ast.BoolOp)
def not_cpu_flag_and(node: ast.BoolOp, ctx) -> None:
    if not isinstance(node.op, ast.And) or isinstance(parent(node), (ast.If, ast.IfExp, ast.While)) or not _may_have_flags(ctx):
        return
    for i, v in enumerate(node.values[:-1]):
        t = _not_cpu(v, ctx)
        if t is None:
            continue
        rest = node.values[i + 1:]
        if any(ctx.model.branches.truth(o).value is False for o in rest):
            continue  # `use_amp = cuda and torch.cuda.is_bf16_supported()`: a CUDA test, its own rule's
        ctx.state(_FlagUses).uses.append((v, t, rest))


@check("DEV027", ast.Call)
def not_cpu_flag_argument(node: ast.Call, ctx) -> None:
    """``torch.cuda.amp.GradScaler(enabled=cuda)``: the flag switches a CUDA call on."""
    if not (node.args or node.keywords) or not _may_have_flags(ctx):
        return
    q = ctx.call_name(node)
    if q is None or not q.startswith("torch.cuda."):
        return
    for v in list(node.args) + [k.value for k in node.keywords]:
        t = _not_cpu(v, ctx)
        if t is not None:
            ctx.state(_FlagUses).uses.append((v, t, [node]))


def _cuda_work(ctx, region) -> Optional[ast.AST]:
    """The first CUDA-only reference in ``region`` (statements or expressions): a ``torch.cuda`` name,
    a ``.cuda()`` call, a ``"cuda"`` device literal.  (``torch.backends.cudnn`` flags are not work: they
    do nothing on an NPU, and DEV018/DEV019 say so.)"""
    for root in region:
        for n in ast.walk(root):
            cls = n.__class__
            if cls is ast.Attribute or cls is ast.Name:
                q = ctx.qualname(n)
                if q is not None and (q == "torch.cuda" or q.startswith("torch.cuda.")):
                    p = parent(n)
                    if isinstance(p, ast.Attribute) and ctx.qualname(p) is not None:
                        continue  # the outermost name of the chain is reported
                    return n
            elif cls is ast.Call:
                f = n.func
                if isinstance(f, ast.Attribute) and f.attr == "cuda" and ctx.qualname(f) is None:
                    return n
            elif cls is ast.Constant and cuda_literal(n) and literal_owner(n, ctx) != "skip":  # not print("cuda")
                return n
    return None


@file_check("DEV027")
def not_cpu_flag(ctx) -> None:
    st = ctx.peek_state(_FlagUses)
    if st is None:
        return
    for use, truth, region in st.uses:
        work = _cuda_work(ctx, region)
        if work is None:
            continue
        flag = ctx.segment(use)
        what = ctx.segment(work).split("\n")[0]
        if len(what) > 60:
            what = what[:57] + "..."
        defined = ctx.segment(truth.origin)
        before = len(ctx.findings)
        ctx.report(use, None, flag=flag, definition=defined, def_line=ctx.line_ref(truth.origin.lineno),
                   work=what, work_line=ctx.line_ref(work.lineno))
        if len(ctx.findings) > before:
            (line, col), _end = ctx.span(truth.origin)
            ctx.findings[-1].related = [{"path": ctx.path, "line": line, "col": col,
                                         "message": f"`{flag}` is defined here as `{defined}`: true for any device that is not the CPU"}]


# ---------------------------------------------------------------------- DST013: DDP, no device set
DDP_CALLS = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
                       "torch.nn.DistributedDataParallel"})
_INIT_CALLS = frozenset({"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"}) | {
    q for q in MESH_CALLS if q.endswith("init_device_mesh")}
_SETS_DEVICE = re.compile(r"\bset_device(?:_index)?\b|\b(?:cuda|npu|accelerator)\.device\(|\bdevice_id\s*=")
"""Text that sets the process's current device: ``torch.cuda/npu.set_device``, ``torch.accelerator.set_device_index``,
``with torch.cuda.device(i)``, ``init_process_group(device_id=...)``."""
_PER_PROCESS = re.compile(r"\bLOCAL_RANK\b|\blocal_rank\b|\.spawn\(|\bSLURM_LOCALID\b")
"""Text that says the script runs one process per device (torchrun's ``LOCAL_RANK``, ``--local_rank``, ``mp.spawn``)."""


@dataclass
class _DdpSites:
    ddp: list = field(default_factory=list)  # DDP calls without device_ids
    init: list = field(default_factory=list)  # process-group / device-mesh constructors


@check("DST013", ast.Call, names=("DistributedDataParallel", "init_process_group", "init_device_mesh"))
def ddp_sites(node: ast.Call, ctx) -> None:
    q = ctx.call_name(node)
    if q in _INIT_CALLS:
        ctx.state(_DdpSites).init.append(node)
        return
    if q not in DDP_CALLS:
        return
    if len(node.args) > 1 or any(isinstance(a, ast.Starred) for a in node.args):
        return
    if any(k.arg is None or k.arg in ("device_ids", "device_mesh", "process_group") for k in node.keywords):
        return  # device_ids given (or a mesh / group that carries the devices), or **kwargs we cannot read
    ctx.state(_DdpSites).ddp.append(node)


@file_check("DST013")
def ddp_device_not_set(ctx) -> None:
    st = ctx.peek_state(_DdpSites)
    if st is None or not st.ddp or not st.init:
        return
    if _SETS_DEVICE.search(ctx.text) or not _PER_PROCESS.search(ctx.text):
        return
    init = st.init[0]
    for call in st.ddp:
        before = len(ctx.findings)
        ctx.report(call, None, init_line=ctx.line_ref(init.lineno))
        if len(ctx.findings) > before:
            (line, col), _end = ctx.span(init)
            ctx.findings[-1].related = [{"path": ctx.path, "line": line, "col": col,
                                         "message": "the process group is set up here, and no current device is set for this process"}]
