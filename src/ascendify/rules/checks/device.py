"""Device and API rules (DEV), part 1: CUDA device strings and ints, ``.cuda()``,
``torch.device``, ``device=``, ``map_location``, device-type tests.

A ``"cuda"`` literal is reported exactly once: by the specific rule whose call
site it sits in (``.to``: DEV002, ``torch.device``: DEV003, ``device=``: DEV004,
``map_location``: DEV005, ``cuda-or-cpu`` choice: DEV007, comparison: DEV023),
or — anywhere else, e.g. ``DEVICE = "cuda"`` later used as ``.to(DEVICE)`` —
by the generic DEV024 at the literal itself.  Literals in call sites owned by
other categories (AMP, DST, MEM, EXT) are left to those rules.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Optional

from ascendify.rules.checks import agnostic as agn
from ascendify.rules.checks._util import fix, is_cuda_device_string, kwarg, method_call, torch_root
from ascendify.rules.registry import check
from ascendify.semantic.bindings import ancestors, param_default_of, parent
from ascendify.semantic import devices as dv
from ascendify.semantic.branches import block_of, npu_word
from ascendify.semantic.fallbacks import portable_fallback
from ascendify.semantic.policy import TABLE_OPERATION
from ascendify.semantic.torch_api import int_device_severity

# ---------------------------------------------------------------------- helpers
_CUDA_N = re.compile(r"^cuda:(\d+)$")

_OTHER_PREFIXES = (
    "torch.amp.",
    "torch.autocast",
    "torch.cuda.amp.",
    "torch.cpu.amp.",
    "torch.distributed.",
    "torch.nn.parallel.",
    "deepspeed",
    "accelerate",
)
_OTHER_NAMES = frozenset(
    {"autocast", "GradScaler", "init_process_group", "init_device_mesh", "DeviceMesh", "DistributedDataParallel", "FullyShardedDataParallel"}
)
_QUIET_CALLS = frozenset({"print", "getattr", "hasattr", "setattr", "debug", "info", "warning", "warn", "error", "exception", "log", "critical"})


def torch_name(ctx, node: Optional[ast.AST] = None) -> Optional[str]:
    """The local name of ``torch`` to write in a fix: the one ``node`` is spelled with
    (``t`` in ``t.cuda.synchronize``), else any import of ``torch``, else None."""
    while isinstance(node, ast.Attribute):
        node = node.value
    if isinstance(node, ast.Name) and ctx.aliases.get(node.id) == "torch":
        return node.id
    return torch_root(ctx)


def _func_name(call: ast.Call) -> Optional[str]:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return None


def other_domain(call: ast.Call, ctx) -> bool:
    """True for calls that other categories own: AMP, distributed, deepspeed/accelerate."""
    name = _func_name(call)
    if name in _OTHER_NAMES:
        return True
    q = ctx.call_name(call)
    if q is None:
        return False
    return any(q == p.rstrip(".") or q.startswith(p if p.endswith(".") else p + ".") for p in _OTHER_PREFIXES)


_FORMAT_INDEX = re.compile(r"^cuda:%[dis]$")


def _formatted_cuda(node: ast.AST) -> Optional[tuple]:
    """``"cuda:%d" % i``, ``"cuda:{}".format(i)``, ``"cuda:" + str(i)`` → (the "cuda:..." Constant, i)."""
    if node.__class__ is ast.BinOp:
        left = node.left
        if left.__class__ is not ast.Constant or not isinstance(left.value, str) or not left.value.startswith("cuda:"):
            return None
        if isinstance(node.op, ast.Mod) and _FORMAT_INDEX.match(left.value):
            return left, node.right
        if isinstance(node.op, ast.Add) and left.value == "cuda:":
            r = node.right
            if isinstance(r, ast.Call) and isinstance(r.func, ast.Name) and r.func.id == "str" and len(r.args) == 1 and not r.keywords:
                return left, r.args[0]
            return left, None
        return None
    if node.__class__ is ast.Call:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "format" and isinstance(f.value, ast.Constant) and isinstance(f.value.value, str):
            if f.value.value == "cuda:{}" and len(node.args) == 1 and not node.keywords:
                return f.value, node.args[0]
    return None


def cuda_literal(node: Optional[ast.AST]) -> bool:
    """``"cuda"``, ``"cuda:N"``, an f-string ``f"cuda:{...}"``, or ``"cuda:%d" % i`` / ``"cuda:{}".format(i)`` / ``"cuda:" + str(i)``."""
    cls = node.__class__
    if cls is ast.Constant:
        return is_cuda_device_string(node.value)
    if cls is ast.JoinedStr and node.values:
        first = node.values[0]
        if len(node.values) == 1 and isinstance(first, ast.Constant):  # f"cuda": an f-string without fields
            return is_cuda_device_string(first.value)
        return isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value == "cuda:" and len(node.values) > 1
    if cls is ast.BinOp or cls is ast.Call:
        return _formatted_cuda(node) is not None
    return False


def _quoted(ctx, node: ast.Constant, value: str) -> str:
    """``value`` as a string literal in the quote style ``node`` is written in."""
    seg = ctx.segment(node)
    for q in ('"""', "'''", '"', "'"):
        if seg.endswith(q) and q not in value and "\\" not in value:
            i = seg.find(q)
            prefix = seg[:i]
            if "f" in prefix.lower() or "b" in prefix.lower():
                break
            return f"{prefix}{q}{value}{q}"
    return repr(value)


def _npu_import(ctx) -> list:
    return [ctx.add_import()] if ctx.has_import("torch") else []



class _WithTorch:
    """``ctx`` seen as if ``import torch`` were there (for a file that gets that import)."""

    aliases = {"torch": "torch"}

    def __init__(self, ctx):
        self.add_prelude = ctx.add_prelude


def agnostic_prelude(ctx) -> Optional[list]:
    """Edits defining ``DEVICE_TYPE``: the prelude, plus ``import torch`` in a file whose module level
    imports nothing from torch (a config module holding ``DEVICE = "cuda"``, a test module importing
    torch inside each test).  None when the module level imports torch only as submodules/names
    (``from torch import nn``): no ``torch`` name to use."""
    pre = agn.prelude(ctx)
    if pre is not None:
        return [pre]
    if any(_imports_torch(n) for n in ctx.tree.body):
        return None
    return [ctx.add_import("import torch"), agn.prelude(_WithTorch(ctx))]


def _imports_torch(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Import):
        return any(a.name.split(".")[0] == "torch" for a in stmt.names)
    return isinstance(stmt, ast.ImportFrom) and not stmt.level and (stmt.module or "").split(".")[0] == "torch"


_PLAIN_PARENTS = (ast.If, ast.IfExp, ast.While, ast.BoolOp, ast.Assign, ast.AnnAssign, ast.Return, ast.Assert, ast.keyword, ast.Call, ast.Expr)


def _paren(node: ast.AST, text: str) -> str:
    """``text`` in parentheses unless ``node``'s parent takes a low-precedence expression as is."""
    return text if isinstance(parent(node), _PLAIN_PARENTS) else f"({text})"


def literal_edits(ctx, node: ast.AST, target: str, npu_import: bool = True) -> Optional[list]:
    """Edits turning a CUDA device literal into the target's device (None = no fix).

    npu: ``"cuda"`` → ``"npu"``, ``"cuda:1"`` → ``"npu:1"``, ``f"cuda:{r}"`` → ``f"npu:{r}"``;
    agnostic: ``DEVICE_TYPE``, ``f"{DEVICE_TYPE}:1"``, ``f"{DEVICE_TYPE}:{r}"`` plus the prelude.
    """
    formatted = _formatted_cuda(node) if node.__class__ in (ast.BinOp, ast.Call) else None
    if node.__class__ is ast.JoinedStr and len(node.values) == 1 and isinstance(node.values[0], ast.Constant):
        v, seg = node.values[0].value, ctx.segment(node)  # f"cuda" (guided-diffusion's dist_util.dev()): a plain string
        q = seg[-1:] if seg[-1:] in ("'", '"') else '"'
        if target == "npu":
            return [ctx.replace(node, q + "npu" + v[4:] + q)] + (_npu_import(ctx) if npu_import else [])
        pre = agnostic_prelude(ctx)
        if pre is None:
            return None
        return [ctx.replace(node, agn.NAME if v == "cuda" else f'f"{{{agn.NAME}}}:{v[5:]}"')] + pre
    if target == "npu":
        imp = _npu_import(ctx) if npu_import else []
        if formatted is not None:
            const = formatted[0]
            return [ctx.replace(const, _quoted(ctx, const, "npu" + const.value[4:]))] + imp
        if isinstance(node, ast.Constant):
            return [ctx.replace(node, _quoted(ctx, node, "npu" + node.value[4:]))] + imp
        seg = ctx.segment(node)
        i = seg.find("cuda:")
        if i < 1 or seg[i - 1] not in "\"'":
            return None
        inner = _inner_cuda_refs(ctx, node)
        if inner is None:
            return None
        tail = seg[i + 5:]
        for old, new in inner:  # f"cuda:{torch.cuda.current_device()}": the index moves to the NPU with it
            tail = tail.replace(old, new)
        return [ctx.replace(node, seg[:i] + "npu:" + tail)] + imp
    pre = agnostic_prelude(ctx)
    if pre is None:
        return None
    if formatted is not None:  # "cuda:%d" % i → f"{DEVICE_TYPE}:{i}"
        index = formatted[1]
        seg = ctx.segment(index) if index is not None else ""
        if not seg or any(c in seg for c in "\"'{}\n"):
            return None
        return [ctx.replace(node, f'f"{{{agn.NAME}}}:{{{seg}}}"')] + pre
    if isinstance(node, ast.Constant):
        if node.value == "cuda":
            return [ctx.replace(node, agn.NAME)] + pre
        return [ctx.replace(node, f'f"{{{agn.NAME}}}:{node.value[5:]}"')] + pre
    seg = ctx.segment(node)
    i = seg.find("cuda:")
    if i < 1 or seg[i - 1] not in "\"'":
        return None
    if _inner_cuda_refs(ctx, node) != []:
        return None  # f"cuda:{torch.cuda.current_device()}": the inner call's own fix goes first
    return [ctx.replace(node, seg[:i] + "{" + agn.NAME + "}:" + seg[i + 5 :])] + pre


def _inner_cuda_refs(ctx, node: ast.AST) -> Optional[list]:
    """(text, NPU text) of each ``torch.cuda.X`` named inside the f-string ``node`` whose NPU name is
    the same (``torch.cuda.current_device`` → ``torch.npu.current_device``); None when one has no
    such name — the literal alone is not fixed then: ``f"npu:{torch.cuda.current_device()}"`` raises."""
    from ascendify.rules.checks._util import cuda_api_map

    out: list = []
    api = None
    for n in ast.walk(node):
        if n.__class__ is ast.Attribute:
            q = ctx.qualname(n) or ""
            if q.startswith("torch.cuda.") and q.count(".") == 2:
                api = api or cuda_api_map()
                name = q[len("torch.cuda."):]
                entry = api.get(name) or {}
                seg = ctx.segment(n)
                if entry.get("npu") != name or not seg.endswith(".cuda." + name):
                    return None
                out.append((seg, seg[: -len(".cuda." + name)] + ".npu." + name))
    return out


def literal_fix(ctx, node: ast.AST, operation: str, safe: bool = True):
    edits = literal_edits(ctx, node, ctx.settings.target)
    return fix(*edits, safe=safe, operation=operation) if edits else None


def is_to_call(call: ast.Call, ctx) -> bool:
    return method_call(call, "to", "to_empty") is not None and ctx.qualname(call.func) is None


def is_torch_device(call: ast.Call, ctx) -> bool:
    return ctx.call_name(call) == "torch.device"


def is_available_call(node: Optional[ast.AST], ctx) -> bool:
    return isinstance(node, ast.Call) and ctx.call_name(node) == "torch.cuda.is_available" and not node.args


def cuda_or_cpu(ifexp: ast.IfExp, ctx) -> bool:
    """``"cuda" if torch.cuda.is_available() else "cpu"`` (DEV007 rewrites the whole choice)."""
    return (
        is_available_call(ifexp.test, ctx)
        and isinstance(ifexp.body, ast.Constant)
        and is_cuda_device_string(ifexp.body.value)
        and isinstance(ifexp.orelse, ast.Constant)
        and ifexp.orelse.value == "cpu"
    )


def _device_call_choice(ifexp: ast.IfExp, ctx) -> bool:
    """``torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")``: one device choice
    (the agnostic fix writes ``torch.device(DEVICE_TYPE)``, not a test of DEVICE_TYPE around two devices)."""
    def dev(call, value):
        return (isinstance(call, ast.Call) and is_torch_device(call, ctx) and len(call.args) == 1 and not call.keywords
                and isinstance(call.args[0], ast.Constant) and call.args[0].value == value and "\n" not in ctx.segment(call.func))
    return dev(ifexp.body, "cuda") and dev(ifexp.orelse, "cpu")


def _device_test_literals(node: ast.Compare) -> list:
    """The CUDA literals a comparison tests against (``x.device.type == "cuda"``, ``d in ("cuda", "cpu")``)."""
    if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
        return []
    out = []
    for side in (node.left, node.comparators[0]):
        if isinstance(side, ast.Constant):
            if is_cuda_device_string(side.value):
                out.append(side)
        elif isinstance(side, (ast.Tuple, ast.List, ast.Set)):
            out.extend(e for e in side.elts if isinstance(e, ast.Constant) and is_cuda_device_string(e.value))
    return out


def _is_npu_str(n: ast.AST) -> bool:
    return n.__class__ is ast.Constant and isinstance(n.value, str) and (n.value == "npu" or n.value.startswith("npu:"))


def _names_npu(test: ast.AST) -> bool:
    """``test`` asks for an NPU: compares against ``"npu"``/``"npu:N"`` (``d.type == "npu"``,
    ``"npu" in str(d)``, ``.startswith("npu")``) or reads a flag named for it (``self.is_npu``).

    Looks top-down only: ``test`` may lie in a part of the tree the walk has not reached, whose
    nodes have no parent links yet."""
    owners = set()
    for n in ast.walk(test):
        cls = n.__class__
        if cls is ast.Compare:
            for side in [n.left, *n.comparators]:
                items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else (side,)
                if any(_is_npu_str(e) for e in items):
                    return True
        elif cls is ast.Call:
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr in ("startswith", "endswith") and n.args and _is_npu_str(n.args[0]):
                return True
            if isinstance(f, ast.Name) and f.id == "hasattr" and len(n.args) == 2 and _is_npu_str(n.args[1]):
                return True  # hasattr(torch, "npu")
        elif cls is ast.Attribute:
            owners.add(id(n.value))  # torch.npu.synchronize: `npu` there is a module, not a flag
            if n.attr == "is_available" and isinstance(n.value, ast.Attribute) and n.value.attr == "npu":
                return True  # torch.npu.is_available()
            if npu_word(n.attr) and id(n) not in owners:
                return True
        elif cls is ast.Name and npu_word(n.id) and id(n) not in owners:  # not `input`
            return True
    return False


_ASSIGNS = (ast.Assign, ast.AnnAssign)


def handles_npu(test: ast.AST, ctx) -> bool:
    """True when the CUDA device test ``test`` is one branch of code that also tests for an NPU, so the
    code already dispatches per device and its CUDA side is right as it is:
    ``if d.type == "cuda": ... elif d.type == "npu": ...``, ``d.type in ("cuda", "npu")``, or
    ``is_cuda = d.type == "cuda"`` next to ``is_npu = d.type == "npu"``."""
    if _names_npu(test):
        return True
    node = test
    p = parent(node)
    while isinstance(p, (ast.BoolOp, ast.UnaryOp)):
        node, p = p, parent(p)
    if node is not test and _names_npu(node):  # d.type == "cuda" or d.type == "npu"
        return True
    if isinstance(p, ast.If) and p.test is node:  # an if/elif chain with an NPU branch, or an `if ... "npu"` next to it
        return ctx.model.context(test).npu_aware
    if isinstance(p, _ASSIGNS) and p.value is node:
        return any(isinstance(st, _ASSIGNS) and st.value is not None and _names_npu(st.value) for st in _neighbours(p))
    return False


def _neighbours(stmt: ast.stmt) -> list:
    """The statements just before and after ``stmt`` in its block."""
    body = block_of(stmt)
    if body is None:
        return []
    i = next((k for k, st in enumerate(body) if st is stmt), -1)
    return body[max(i - 1, 0) : i] + body[i + 1 : i + 2]


_ASSERT_CALLS = re.compile(r"^(assert[A-Z_]\w*|assert_\w+|parametrize|param)$")


def _is_data(node: ast.AST) -> bool:
    """A device name used as data, not as a device: test parameters (``@pytest.mark.parametrize``, any
    decorator argument), ``raise``/``assert`` messages, ``self.assertEqual(..., "cuda")``."""
    child = node
    for a in ancestors(node):
        if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            from ascendify.semantic.policy import test_decorator

            return any(child is d and test_decorator(d) for d in a.decorator_list)
        if isinstance(a, ast.Raise):
            return True
        if isinstance(a, ast.Assert):
            return child is a.msg
        if isinstance(a, ast.Assign) and isinstance(parent(a), ast.ClassDef) and _is_enum(parent(a)):
            return True
        if isinstance(a, ast.Call):
            f = a.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if _ASSERT_CALLS.match(name):
                return True
        if isinstance(a, ast.stmt):
            return False
        child = a
    return False


_DEVICE_NAMES = frozenset({"hip", "rocm", "xpu", "mps", "hpu", "npu", "cpu", "gpu", "mlu", "musa", "xla", "tpu"})


def _is_enum(cls: ast.ClassDef) -> bool:
    for b in cls.bases:
        name = b.attr if isinstance(b, ast.Attribute) else b.id if isinstance(b, ast.Name) else ""
        if name.endswith("Enum") or name in ("Flag", "IntFlag"):
            return True
    return False


def device_table(seq: ast.AST) -> bool:
    """A list/tuple/set of two or more device-type names (``["cuda", "xpu", "hpu"]``,
    ``choices=["cpu", "cuda"]``): a table of device types, which gets an ``"npu"`` entry."""
    elts = getattr(seq, "elts", [])
    if len(elts) < 2:
        return False
    for e in elts:
        if not (isinstance(e, ast.Constant) and isinstance(e.value, str) and dv.parse_device_string(e.value) and ":" not in e.value):
            return False
    return True


def _table_fix(ctx, seq: ast.AST, lit: ast.Constant):
    """``["cuda", "xpu"]`` → ``["cuda", "npu", "xpu"]`` (None when "npu" is already there)."""
    if any(isinstance(e, ast.Constant) and e.value == "npu" for e in seq.elts):
        return None
    seg = ctx.segment(seq)
    if "\n" in seg:
        return None
    o, c = {ast.Tuple: "()", ast.List: "[]", ast.Set: "{}"}[seq.__class__]
    if not (seg.startswith(o) and seg.endswith(c)):
        return None
    return fix(_after_entry(ctx, lit), operation=TABLE_OPERATION)


def _after_entry(ctx, lit: ast.Constant):
    """Edit adding ``"npu"`` right after the entry ``lit`` of a tuple, list or set: the entry is the
    node rewritten (``('cuda',)`` → ``('cuda', 'npu',)``), so the edit lands whether the sequence
    has parentheses of its own or not."""
    return ctx.replace(lit, f"{ctx.segment(lit)}, {_quoted(ctx, lit, 'npu')}")


def literal_owner(node: ast.AST, ctx) -> Optional[str]:
    """Which rule reports the CUDA literal ``node`` ("skip" = nobody, other = other category)."""
    p = parent(node)
    if isinstance(p, (ast.JoinedStr, ast.Expr, ast.Subscript)):
        return "skip"
    if isinstance(p, ast.Tuple) and isinstance(parent(p), ast.Subscript):
        return "skip"  # Literal["cpu", "cuda"]: a type annotation, not a device
    if _is_data(node):
        return "skip"
    if isinstance(p, ast.Tuple) and isinstance(parent(p), ast.Dict) and any(k is p for k in parent(p).keys):
        return "skip"  # {("cuda", 8): 2}: a lookup key (expected values per device and capability)
    if isinstance(p, (ast.Tuple, ast.List, ast.Set)) and not isinstance(parent(p), ast.Compare) and device_table(p):
        return "DEV024"
    if isinstance(p, (ast.Tuple, ast.List, ast.Set)) and isinstance(parent(p), ast.Compare):
        return "DEV023"
    if isinstance(p, ast.Compare):
        return "DEV023" if _device_test_literals(p) else "skip"
    if isinstance(p, ast.IfExp) and node is p.body and cuda_or_cpu(p, ctx):
        return "DEV007"
    if isinstance(p, ast.keyword):
        call = parent(p)
        if not isinstance(call, ast.Call):
            return None
        if other_domain(call, ctx) or p.arg in ("pin_memory_device", "device_map"):  # MEM001, EXT009
            return "other"
        if p.arg == "device":
            if is_to_call(call, ctx):
                return "DEV002"
            if is_torch_device(call, ctx):
                return "DEV003"
            return "DEV004"
        if p.arg == "type" and is_torch_device(call, ctx):
            return "DEV003"
        if p.arg == "map_location":
            return "DEV005"
        return None
    if isinstance(p, ast.Dict):
        if any(k is node for k in p.keys):  # a key is a tag to look up (a saved location in a map_location dict), not a device
            return "skip"
        for k, v in zip(p.keys, p.values):
            if v is node and isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value in _DEVICE_NAMES:
                return "skip"  # {"hip": "cuda"}: a mapping between device names (ROCm reports "cuda"), data
        kw = parent(p)
        if isinstance(kw, ast.keyword) and kw.arg == "map_location":
            return "DEV005" if any(v is node for v in p.values) else "skip"
        if isinstance(kw, ast.keyword) and kw.arg == "device_map":
            return "other"  # EXT009
        return None
    if isinstance(p, ast.Call) and node in p.args:
        if other_domain(p, ctx):
            return "other"
        if _func_name(p) in _QUIET_CALLS:
            return "skip"
        if is_to_call(p, ctx) and p.args[0] is node:
            return "DEV002"
        if is_torch_device(p, ctx) and p.args[0] is node:
            return "DEV003"
        if method_call(p, "startswith", "endswith") and p.args[0] is node and getattr(node, "value", None) == "cuda":
            return "DEV023"
        if ctx.call_name(p) == "torch.load" and len(p.args) > 1 and p.args[1] is node:
            return "DEV005"
    return None


# ---------------------------------------------------------------------- DEV001
@check("DEV001", ast.Call, names=("cuda",))
def cuda_method(node: ast.Call, ctx) -> None:
    if method_call(node, "cuda") is None:
        return
    func = node.func
    if ctx.qualname(func) is not None:  # torch.cuda(...) is not a method call on a tensor
        return
    if ctx.settings.target == "npu":
        f = fix(ctx.rename_attr(func, "npu"), ctx.add_import(), operation="replace .cuda() with .npu()")
    else:
        pre = agn.prelude(ctx)
        f = None
        index = node.args[0] if node.args else kwarg(node, "device")
        if pre is not None and not any(isinstance(a, ast.Starred) for a in node.args) and not any(k.arg is None for k in node.keywords):
            rest = [ctx.segment(a) for a in node.args[1:]] + [f"{k.arg}={ctx.segment(k.value)}" for k in node.keywords if k.arg != "device"]
            safe = True
            if index is None:
                first = agn.NAME
            elif isinstance(index, ast.Constant) and isinstance(index.value, int) and not isinstance(index.value, bool):
                first = f'f"{{{agn.NAME}}}:{index.value}"'
            elif isinstance(index, ast.Constant) and isinstance(index.value, str) and _CUDA_N.match(index.value):
                first = f'f"{{{agn.NAME}}}:{index.value[5:]}"'
            else:
                seg = ctx.segment(index)
                value = ctx.model.device_of(index)
                if dv.only(value, dv.INDEX) and any(o == "argparse-none" for _k, o in value):
                    # an ordinal or None (.cuda(None) is the current device, "cuda:None" raises): torch.device(type, None) is too
                    t = torch_root(ctx)
                    first = f"{t}.device({agn.NAME}, {seg})" if t and "\n" not in seg else None
                elif dv.only(value, dv.INDEX):  # an ordinal: that index of the current accelerator (cpu:N without one)
                    first = f'f"{{{agn.NAME}}}:{{{seg}}}"' if not any(c in seg for c in '"{}\n') else None
                else:  # a torch.device or a device string (DDP code's `.cuda(device)`): `.to(device)` as it is
                    first = seg if "\n" not in seg else None
                    safe = dv.UNKNOWN not in dv.kinds(value)  # unknown could be None: `.cuda(None)` is the current device
            if first is not None:
                edits = [ctx.rename_attr(func, "to"), ctx.set_args(node, ", ".join([first] + rest))]
                if agn.NAME in first:
                    edits.append(pre)
                f = fix(*edits, safe=safe, operation="replace .cuda() with .to(DEVICE_TYPE)")
    ctx.report(node, f)


# ---------------------------------------------------------------------- DEV002
@check("DEV002", ast.Call, names=("to", "to_empty"))
def to_cuda_string(node: ast.Call, ctx) -> None:
    if method_call(node, "to", "to_empty") is None or ctx.qualname(node.func) is not None:
        return
    lit = node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else kwarg(node, "device")
    if not cuda_literal(lit):
        return
    ctx.report(lit, literal_fix(ctx, lit, "move to the target device"), method=node.func.attr)


# ---------------------------------------------------------------------- DEV003
@check("DEV003", ast.Call, names=("device",))
def torch_device_cuda(node: ast.Call, ctx) -> None:
    f = node.func
    if not (isinstance(f, ast.Attribute) and f.attr == "device" or isinstance(f, ast.Name)):
        return
    if not is_torch_device(node, ctx):
        return
    lit = node.args[0] if node.args else kwarg(node, "type")
    if not cuda_literal(lit):
        return
    ctx.report(lit, literal_fix(ctx, lit, "torch.device on the target device"))


# ---------------------------------------------------------------------- DEV004
@check("DEV004", ast.keyword)
def device_kwarg_cuda(node: ast.keyword, ctx) -> None:
    if node.arg != "device" or not cuda_literal(node.value):
        return
    call = parent(node)
    if not isinstance(call, ast.Call) or is_to_call(call, ctx) or is_torch_device(call, ctx) or other_domain(call, ctx):
        return
    ctx.report(node.value, literal_fix(ctx, node.value, "device= on the target device"), func=_func_name(call) or "call")


# ---------------------------------------------------------------------- DEV005
@check("DEV005", ast.Call, names=("load",))
def map_location_cuda(node: ast.Call, ctx) -> None:
    if _func_name(node) != "load" or ctx.call_name(node) != "torch.load":
        return
    ml = kwarg(node, "map_location")
    if ml is None and len(node.args) > 1:
        ml = node.args[1]
    if ml is None:
        return
    if cuda_literal(ml):
        ctx.report(ml, literal_fix(ctx, ml, "map_location on the target device"))
    elif isinstance(ml, ast.Dict):
        # keys are the saved location tags ("cuda:0" in a GPU checkpoint) and stay; values are where to load
        lits = [v for v in ml.values if cuda_literal(v)]
        if not lits:
            return
        edits: list = []
        for lit in lits:
            e = literal_edits(ctx, lit, ctx.settings.target)
            if e is None:
                edits = []
                break
            edits.extend(e)
        ctx.report(ml, fix(*edits, operation="map_location on the target device") if edits else None)


# ---------------------------------------------------------------------- DEV006
_CERTAIN_ORIGINS = frozenset({"literal", "env", "rank", "current_device", "modulo", "argparse", "arith"})


def int_device(node: Optional[ast.AST], ctx) -> Optional[bool]:
    """Is ``node`` an int device index, by the model's device value?  True = certainly (a literal,
    ``LOCAL_RANK`` from the environment, ``dist.get_rank()``, ``rank % torch.cuda.device_count()``,
    an ``int``-typed argparse option, ``torch.cuda.current_device()``, through variables, ``self.``
    attributes, helpers' return values and the file's call sites), False = only its name says so
    (``rank``, ``gpu_id``), None = not an ordinal (or also a device string or tensor device)."""
    if node is None:
        return None
    value = ctx.model.device_of(node)
    origins = {a[1] for a in value if a[0] == dv.INDEX}
    if not origins or any(a[0] not in (dv.INDEX, dv.UNKNOWN) for a in value):
        return None
    if origins & _CERTAIN_ORIGINS:
        return True
    return False




def _index_text(ctx, node: ast.AST, dev: str) -> Optional[str]:
    if isinstance(node, ast.Constant):
        return f'"{dev}:{node.value}"' if dev == "npu" else f'f"{{{dev}}}:{node.value}"'
    seg = ctx.segment(node)
    if "\n" in seg or '"' in seg or "{" in seg:
        return None
    return f'f"npu:{{{seg}}}"' if dev == "npu" else f'f"{{{dev}}}:{{{seg}}}"'


@check("DEV006", ast.Call)
def bare_int_device(node: ast.Call, ctx) -> None:
    name = _func_name(node)
    target = ctx.settings.target
    if name in ("to", "to_empty") and ctx.qualname(node.func) is None:
        arg = node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else kwarg(node, "device")
        _report_int_device_arg(arg, ctx, f"{name}({{}})")
    elif name == "device" and is_torch_device(node, ctx):
        if len(node.args) != 1 or node.keywords:
            return
        arg = node.args[0]
        kind = int_device(arg, ctx)
        if kind is None:
            return
        f = None
        if target == "npu":
            f = fix(ctx.set_args(node, f'"npu", {ctx.segment(arg)}'), *_npu_import(ctx), safe=kind, operation="name the device type of an int device")
        else:
            pre = agn.prelude(ctx)
            if pre is not None:
                f = fix(ctx.set_args(node, f"{agn.NAME}, {ctx.segment(arg)}"), pre, safe=kind, operation="name the device type of an int device")
        ctx.report(arg, f, severity=int_device_severity(ctx.settings), form=f"torch.device({ctx.segment(arg)})")
    elif name in _DDP_NAMES:
        ids = kwarg(node, "device_ids")
        if isinstance(ids, (ast.List, ast.Tuple)):
            for elt in ids.elts:
                _report_int_device_arg(elt, ctx, "device_ids=[{}]")
        out = kwarg(node, "output_device")
        if out is not None:
            _report_int_device_arg(out, ctx, "output_device={}")
    else:
        arg = kwarg(node, "device")
        if arg is None or name == "cuda" or other_domain(node, ctx):
            return
        _report_int_device_arg(arg, ctx, "device={}")


_DDP_NAMES = frozenset({"DistributedDataParallel", "DDP"})


def _report_int_device_arg(arg, ctx, form: str) -> None:
    """Report an int device passed as ``arg`` (``.to(rank)``, ``device=rank``) with a fix that
    names the device type (``f"npu:{rank}"``, or ``DEVICE_TYPE`` for the agnostic target)."""
    kind = int_device(arg, ctx)
    if kind is None:
        return
    target = ctx.settings.target
    text = _index_text(ctx, arg, "npu" if target == "npu" else agn.NAME)
    f = None
    if text is not None:
        extra = _npu_import(ctx) if target == "npu" else agnostic_prelude(ctx)
        if extra is not None:
            f = fix(ctx.replace(arg, text), *extra, safe=kind, operation="name the device type of an int device")
    ctx.report(arg, f, severity=int_device_severity(ctx.settings), form=form.format(ctx.segment(arg)))


# ---------------------------------------------------------------------- DEV007
@check("DEV007", ast.Call, names=("is_available",))
def cuda_is_available(node: ast.Call, ctx) -> None:
    if _func_name(node) != "is_available" or not is_available_call(node, ctx):
        return
    p = parent(node)
    if isinstance(p, ast.BoolOp) and any(isinstance(v, ast.Compare) and _device_test_literals(v) and handles_npu(v, ctx) for v in p.values):
        return  # is_cuda = d.type == "cuda" and torch.cuda.is_available(), next to its NPU twin
    if ctx.model.context(node).npu_aware:  # next to its NPU counterpart: the code already dispatches per device
        return
    choice = p if isinstance(p, ast.IfExp) and p.test is node and cuda_or_cpu(p, ctx) else None
    t = torch_name(ctx, node.func)
    f = None
    if ctx.settings.target == "npu":
        new = f"{t}.npu.is_available()" if t else "torch_npu.npu.is_available()"
        edits = [ctx.replace(node, new), ctx.add_import()]
        if choice is not None:
            edits.insert(1, ctx.replace(choice.body, _quoted(ctx, choice.body, "npu" + choice.body.value[4:])))
        f = fix(*edits, operation="test for an NPU instead of CUDA")
    else:
        pre = agn.prelude(ctx)
        if pre is not None:
            dchoice = p if isinstance(p, ast.IfExp) and p.test is node and _device_call_choice(p, ctx) else None
            if choice is not None and choice.body.value == "cuda":
                f = fix(ctx.replace(choice, agn.NAME), pre, operation="use DEVICE_TYPE for the device choice")
            elif dchoice is not None:  # torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
                t = ctx.segment(dchoice.body.func)
                f = fix(ctx.replace(dchoice, f"{t}({agn.NAME})"), pre, operation="use DEVICE_TYPE for the device choice")
            else:
                # not torch.accelerator.is_available(): that is true on Apple MPS, where the CUDA test was false
                edits = [ctx.replace(node, _paren(node, f'{agn.NAME} != "cpu"')), pre]
                if choice is not None:
                    edits += literal_edits(ctx, choice.body, "agnostic") or []
                f = fix(*edits, operation="test for any accelerator instead of CUDA")
    ctx.report(node, f)


# ---------------------------------------------------------------------- DEV015
@dataclass
class _IsCudaStored:
    """Whether the file stores an attribute named ``is_cuda``."""

    found: bool


def _assigned_is_cuda(ctx) -> bool:
    """The file stores an attribute named ``is_cuda`` (``self.is_cuda = ...``); computed once, on the first ``.is_cuda``."""
    return ctx.state(_IsCudaStored, lambda c: _IsCudaStored(any(
        isinstance(n, ast.Attribute) and n.attr == "is_cuda" and isinstance(n.ctx, ast.Store) for n in ast.walk(c.tree)
    ))).found


@check("DEV015", ast.Attribute, names=("is_cuda",))
def tensor_is_cuda(node: ast.Attribute, ctx) -> None:
    if node.attr != "is_cuda" or not isinstance(node.ctx, ast.Load) or ctx.qualname(node) is not None:
        return
    if _assigned_is_cuda(ctx):  # `self.is_cuda = ...`: the project's own flag, not Tensor.is_cuda
        v = node.value
        if isinstance(v, ast.Name) and v.id in ("self", "cls"):
            return
    if _portable_fallback(node, ctx):
        return
    if ctx.settings.target == "npu":
        f = fix(ctx.rename_attr(node, "is_npu"), ctx.add_import(), operation="replace .is_cuda with .is_npu")
    else:
        # "on an accelerator" = not on the CPU; unsafe: meta tensors also pass
        seg = ctx.segment(node.value)
        f = None
        if "\n" not in seg:
            where, op = node, "!="
            p = parent(node)
            if isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not):
                where, op = p, "=="
            text = _paren(where, f'{seg}.device.type {op} "cpu"')
            f = fix(ctx.replace(where, text), safe=False, operation="test for a non-CPU device instead of .is_cuda")
    ctx.report(node, f)


# ---------------------------------------------------------------------- DEV017
@check("DEV017", ast.Call, names=("load",))
def torch_load_no_map_location(node: ast.Call, ctx) -> None:
    if _func_name(node) != "load" or ctx.call_name(node) != "torch.load":
        return
    if len(node.args) != 1 or any(isinstance(a, ast.Starred) for a in node.args):
        return
    if any(k.arg is None or k.arg == "map_location" for k in node.keywords):
        return
    f = fix(ctx.add_keyword(node, 'map_location="cpu"'), safe=False, operation='load the checkpoint with map_location="cpu"')
    ctx.report(node, f)


def _portable_fallback(node: ast.AST, ctx) -> bool:
    """Report the device test ``node`` as info, without a fix, when it sends every device but CUDA to a
    portable early return (:func:`ascendify.semantic.fallbacks.portable_fallback`: stylegan2's
    ``if input.device.type != "cuda": return False``): an Ascend host takes the path CPU takes, which
    is correct there; rewritten, the test would send NPU tensors down the CUDA-only path."""
    fb = portable_fallback(node, ctx.segment)
    if fb is None:
        return False
    ret = fb.body[-1].lineno
    n = len(ctx.findings)
    ctx.report(node, None, severity="info", message=(
        f"device test true on every device but CUDA: an Ascend host takes the portable path it returns at line {ret} "
        "(no CUDA code there or after the test); correct on Ascend, left as written"))
    if len(ctx.findings) > n:
        ctx.findings[-1].note(f"a fallback for non-CUDA devices (returns at line {ret}); only the CUDA-only path after "
                              "it stays off: add the NPU to the test only if that path runs on torch_npu", "fallback", ret)
    return True


# ---------------------------------------------------------------------- DEV023
@check("DEV023", ast.Compare)
@check("DEV023", ast.Call, names=("startswith", "endswith"))
def device_type_test(node, ctx) -> None:
    if isinstance(node, ast.Compare):
        lits = _device_test_literals(node)
        if not lits or handles_npu(node, ctx):
            return
    else:
        if method_call(node, "startswith", "endswith") is None or len(node.args) != 1:
            return
        lits = node.args
        if not (isinstance(lits[0], ast.Constant) and lits[0].value == "cuda") or handles_npu(node, ctx):
            return
    if _portable_fallback(node, ctx):
        return
    target = ctx.settings.target
    if target != "npu":
        ctx.report(node, _agnostic_device_test(node, lits, ctx))
        return
    if _tests_data(node, lits, ctx):
        both = _agnostic_device_test(node, lits, ctx)  # the data may still say "cuda": accept both
        ctx.report(node, both if both is not None and both.safe else None)
        return
    edits: list = []
    for lit in lits:
        # a string comparison needs no torch_npu: no `import torch_npu` for it alone
        e = literal_edits(ctx, lit, target, npu_import=False)
        if e is None:
            edits = []
            break
        edits.extend(e)
    ctx.report(node, fix(*edits, operation="test for the target device type") if edits else None)


def _tests_data(node, lits, ctx) -> bool:
    """Is the tested string read from data rather than a device this program chose: ``str(X)`` of a
    non-device value or a subscript (``str(node["value"]).startswith("cuda")`` in CLIP's patch of a
    CUDA-traced TorchScript archive, whose constants say "cuda" on every host)?  Testing it for "npu"
    instead would never match; the test must accept both."""
    if isinstance(node, ast.Call):
        subject = node.func.value if isinstance(node.func, ast.Attribute) else None
    else:
        sides = [node.left, *node.comparators]
        rest = [s for s in sides if all(s is not lit for lit in lits)]
        subject = rest[0] if len(rest) == 1 else None
    if isinstance(subject, ast.Call) and isinstance(subject.func, ast.Name) and subject.func.id in ("str", "repr") \
            and len(subject.args) == 1 and not subject.keywords and not ctx.model.bindings.resolve(subject.func):
        subject = subject.args[0]
        if isinstance(subject, ast.Subscript):
            return True
        name = subject.id if isinstance(subject, ast.Name) else subject.attr if isinstance(subject, ast.Attribute) else ""
        if "device" in name.lower() or name.lower() in ("dev", "d"):
            return False  # str(device): named for the program's device
        value = ctx.model.device_of(subject)
        return not value or dv.only(value, dv.UNKNOWN)
    return isinstance(subject, ast.Subscript)  # cfg["device"] == "cuda": a config read, not rewritten with the code


def _agnostic_device_test(node, lits, ctx):
    """A CUDA device-type test that also accepts the NPU, exactly as before everywhere else:

    ``d == "cuda"`` → ``d in ("cuda", "npu")``, ``d != "cuda"`` → ``d not in ("cuda", "npu")``,
    ``"cuda" in s`` → ``("cuda" in s or "npu" in s)``, ``s.startswith("cuda")`` →
    ``s.startswith(("cuda", "npu"))``, ``d in ("cuda", "cpu")`` → ``d in ("cuda", "npu", "cpu")``.
    Safe: on CPU, CUDA and MPS the test gives what it gave; on an Ascend host it is true for the NPU.
    Exact ``"cuda:N"`` tests become ``f"{DEVICE_TYPE}:N"`` (unsafe: the index test changes meaning).
    """
    lit = lits[0]
    npu = _quoted(ctx, lit, "npu")
    if isinstance(node, ast.Call):  # s.startswith("cuda") → s.startswith(("cuda", "npu"))
        return fix(ctx.set_args(node, f"({ctx.segment(lit)}, {npu})"), operation="accept the NPU in the device-type test")
    op = node.ops[0]
    if "\n" not in ctx.segment(node) and all(x.value == "cuda" for x in lits):
        if isinstance(op, (ast.Eq, ast.NotEq)) and len(lits) == 1:
            other = node.comparators[0] if lit is node.left else node.left
            if not isinstance(other, (ast.Tuple, ast.List, ast.Set)):
                sym = "in" if isinstance(op, ast.Eq) else "not in"
                text = f"{ctx.segment(other)} {sym} ({ctx.segment(lit)}, {npu})"
                return fix(ctx.replace(node, _paren(node, text)), operation="accept the NPU in the device-type test")
        elif isinstance(op, (ast.In, ast.NotIn)):
            if lit is node.left and len(lits) == 1:  # "cuda" in s → ("cuda" in s or "npu" in s)
                seq = ctx.segment(node.comparators[0])
                if isinstance(op, ast.In):
                    text = f"({ctx.segment(lit)} in {seq} or {npu} in {seq})"
                else:
                    text = f"({ctx.segment(lit)} not in {seq} and {npu} not in {seq})"
                return fix(ctx.replace(node, text), operation="accept the NPU in the device-type test")
            seq = node.comparators[0]
            if isinstance(seq, (ast.Tuple, ast.List, ast.Set)) and lit in seq.elts:
                if any(isinstance(e, ast.Constant) and e.value == "npu" for e in seq.elts):
                    return None
                seg = ctx.segment(seq)
                if "\n" in seg:
                    return None
                return fix(_after_entry(ctx, lit), operation="accept the NPU in the device-type test")
    edits: list = []
    for lit in lits:
        e = literal_edits(ctx, lit, "agnostic")
        if e is None:
            return None
        edits.extend(e)
    return fix(*edits, safe=False, operation="test for DEVICE_TYPE")


# ---------------------------------------------------------------------- DEV024
@check("DEV024", ast.Constant, ast.JoinedStr, ast.BinOp)
@check("DEV024", ast.Call, names=("format",))
def cuda_device_string(node, ctx) -> None:
    cls = node.__class__
    if cls is ast.Constant:
        v = node.value
        if v.__class__ is not str or not v.startswith("cuda") or not is_cuda_device_string(v):
            return
    elif cls is ast.Call:
        f = node.func
        if f.__class__ is not ast.Attribute or f.attr != "format" or not cuda_literal(node):
            return
    elif not cuda_literal(node):
        return
    owner = literal_owner(node, ctx)
    if owner == "DEV024":  # a table of device types: add "npu" beside "cuda"
        seq = parent(node)
        if any(isinstance(e, ast.Constant) and e.value == "npu" for e in seq.elts):
            return  # the NPU is in the table already (the "cuda" entry kept by fix, or the project's own)
        ctx.report(node, _table_fix(ctx, seq, node), value=ctx.segment(node))
        return
    if owner is not None:
        return
    ctx.report(node, literal_fix(ctx, node, "replace the CUDA device string", safe=_literal_fix_safe(node, ctx)),
               severity="error" if _reaches_device_sink(node, ctx) else None, value=ctx.segment(node))


_MOVES = frozenset({"to", "cuda", "to_empty"})


def _reaches_device_sink(node: ast.AST, ctx) -> bool:
    """``device = "cuda"`` whose name is then used as a device (``model.to(device)``, ``device=device``,
    ``torch.device(device)``) in the same scope: the value moves tensors, so the finding is an error there
    (issue 22: severity follows what the value does)."""
    p = parent(node)
    if isinstance(p, ast.IfExp):  # device = "cuda" if cond else "cpu"
        node, p = p, parent(p)
    name = param_default_of(node)
    if name is not None:  # def helper(amp, device="cuda"): a caller that leaves it out gets CUDA
        scope = parent(p)
    elif isinstance(p, ast.Assign) and p.value is node and len(p.targets) == 1 and isinstance(p.targets[0], ast.Name):
        name = p.targets[0].id
        scope = ctx.enclosing_function(p) or ctx.tree
    else:
        return False
    for n in ast.walk(scope):
        if n.__class__ is not ast.Name or n.id != name or not isinstance(n.ctx, ast.Load):
            continue
        use = parent(n)
        if isinstance(use, ast.keyword) and use.arg in ("device", "device_type"):  # device_type: autocast
            return True
        if isinstance(use, ast.Call) and use.args and use.args[0] is n:
            f = use.func
            if isinstance(f, ast.Attribute) and f.attr in _MOVES and ctx.qualname(f) is None:
                return True
            if ctx.call_name(use) in ("torch.device", "torch.autocast", "torch.amp.autocast"):
                return True
    return False


def _literal_fix_safe(node: ast.AST, ctx) -> bool:
    """Unsafe where the rewritten literal does not by itself keep the code consistent:

    * ``accelerator="cuda"`` (Lightning ``Trainer``/``Fabric``): Lightning names no ``"npu"`` accelerator
      without a plugin;
    (``"cuda" if "cuda" in device else "cpu"``: the literal in a branch of a CUDA test changes together
    with that test, by the fix policy of the semantic model.)
    """
    p = parent(node)
    if isinstance(p, ast.keyword) and p.arg == "accelerator":
        return False
    return True
