"""Abstract device values: what device an expression can denote.

A value is a frozenset of atoms ``(kind, origin)``:

* ``("cuda", origin)`` — a CUDA device: ``"cuda"``, ``"cuda:1"``, ``f"cuda:{r}"``,
  ``torch.device("cuda", r)``; origin ``"literal"`` (or ``"ref:<module.NAME>"``
  when it comes from another module, resolved by the project pass);
* ``("npu", o)``, ``("cpu", o)``, ``("other", "xpu"|"mps"|"hpu"|...)``;
* ``("accel", o)`` — the current accelerator (``torch.accelerator``, ``DEVICE_TYPE``);
* ``("index", origin)`` — a bare ordinal: origin ``literal``, ``env`` (``LOCAL_RANK``/``RANK``
  read from ``os.environ``), ``rank`` (``dist.get_rank()``, a ``rank``/``local_rank`` parameter),
  ``current_device`` (``torch.cuda.current_device()``), ``modulo`` (``rank % torch.cuda.device_count()``),
  ``name`` (only its name says so: ``gpu_id``);
* ``("tensor", o)`` — the device of an existing tensor/module (``x.device``): follows the data;
* ``("ref", "<qualified name>")`` — a value imported from another module (joined later);
* ``("unknown", "")``.

Values flow through assignments and unpacking, ``self.`` attributes within a
class, attribute stores on objects (``args.x = ...``), argparse defaults,
parameters (from the file's call sites and defaults), return values of local
functions, f-strings, ``%``/``.format``/``+``, conditional expressions and
``os.environ`` reads.
"""

from __future__ import annotations

import ast
import re
from typing import Optional

from ascendify.semantic.bindings import Bindings

CUDA = "cuda"
NPU = "npu"
CPU = "cpu"
OTHER = "other"
ACCEL = "accel"
INDEX = "index"
TENSOR = "tensor"
REF = "ref"
UNKNOWN = "unknown"

_U = frozenset({(UNKNOWN, "")})
_EMPTY: frozenset = frozenset()
OTHER_ACCELERATORS = ("xpu", "mps", "hpu", "xla", "mtia", "privateuseone", "musa", "mlu", "meta", "vulkan", "ipu")
_DEV_RE = re.compile(r"^(cuda|npu|cpu|xpu|mps|hpu|xla|mtia|musa|mlu|meta|vulkan|ipu)(:\d+)?$")
RANK_ENV = frozenset({"LOCAL_RANK", "RANK", "LOCAL_PROCESS_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK",
                      "MPI_LOCALRANKID", "PMI_RANK", "SLURM_PROCID", "GROUP_RANK", "NODE_RANK"})
RANK_NAME = re.compile(r"^(local_?rank|rank|gpu|gpus?_?id|gpu_?idx|gpu_?index|device_?id|device_?idx|device_?index|dev_?id|cuda_?id|local_?device|device_?ordinal|gpu_?num)$", re.IGNORECASE)
_RANK_CALLS = frozenset({"torch.distributed.get_rank", "torch.distributed.get_local_rank", "torch.distributed.get_node_local_rank",
                         "torch.distributed.distributed_c10d.get_rank"})
_CURRENT = {"torch.cuda.current_device": (INDEX, "current_device"), "torch.npu.current_device": (NPU, "current_device"),
            "torch.accelerator.current_device_index": (ACCEL, "current_device"), "torch.accelerator.current_device_idx": (ACCEL, "current_device"),
            "torch.xpu.current_device": (OTHER, "xpu")}
_ENV_READS = frozenset({"os.environ.get", "os.getenv", "os.environ.setdefault"})
_MAX_DEPTH = 12


def parse_device_string(s: object) -> Optional[tuple]:
    """``"cuda:1"`` → ``("cuda", "literal")``; anything that is not a device string → None."""
    if not isinstance(s, str) or len(s) > 16:
        return None
    m = _DEV_RE.match(s)
    if not m:
        return None
    t = m.group(1)
    if t in (CUDA, NPU, CPU):
        return (t, "literal")
    return (OTHER, t)


def kinds(value: frozenset) -> set:
    return {a[0] for a in value}


class DeviceValues:
    """Memoised device-value evaluation over one file's :class:`Bindings`.

    ``qualname(node)`` resolves import aliases (the FileContext's); ``arg_defaults``
    maps argparse dests to their default node.
    """

    def __init__(self, bindings: Bindings, qualname, arg_defaults: dict, calls_of):
        self.b = bindings
        self.qualname = qualname
        self.arg_defaults = arg_defaults
        self.calls_of = calls_of  # function name -> list of local ast.Call (lazy, from the model)
        self._memo: dict = {}
        self._busy: set = set()

    # ------------------------------------------------------------------ entry
    def of(self, node: Optional[ast.AST], depth: int = 0) -> frozenset:
        if node is None:
            return _EMPTY
        key = id(node)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        if key in self._busy or depth > _MAX_DEPTH:
            return _U
        self._busy.add(key)
        try:
            v = self._eval(node, depth + 1)
        finally:
            self._busy.discard(key)
        self._memo[key] = v
        return v

    # ------------------------------------------------------------------ evaluation
    def _eval(self, node: ast.AST, d: int) -> frozenset:
        cls = node.__class__
        if cls is ast.Constant:
            v = node.value
            if isinstance(v, str):
                atom = parse_device_string(v)
                return frozenset({atom}) if atom else _U
            if isinstance(v, int) and not isinstance(v, bool):
                return frozenset({(INDEX, "literal")})
            if v is None:
                return _EMPTY
            return _U
        if cls is ast.JoinedStr:
            first = node.values[0] if node.values else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                head = first.value.split(":")[0]
                atom = parse_device_string(head) if ":" in first.value or len(node.values) == 1 else None
                if atom:
                    return frozenset({atom})
            if isinstance(first, ast.FormattedValue) and len(node.values) >= 2:
                sep = node.values[1]
                if isinstance(sep, ast.Constant) and isinstance(sep.value, str) and sep.value.startswith(":"):
                    inner = self.of(first.value, d)
                    return frozenset(a for a in inner if a[0] in (CUDA, NPU, CPU, OTHER, ACCEL, REF)) or _U
            return _U
        if cls is ast.Name:
            return self._name(node, d)
        if cls is ast.Attribute:
            return self._attribute(node, d)
        if cls is ast.Call:
            return self._call(node, d)
        if cls is ast.IfExp:
            return self.of(node.body, d) | self.of(node.orelse, d)
        if cls is ast.BoolOp:
            out: frozenset = _EMPTY
            for v in node.values:
                out = out | self.of(v, d)
            return out
        if cls is ast.BinOp:
            return self._binop(node, d)
        if cls is ast.Subscript:
            return self._subscript(node, d)
        if cls is ast.NamedExpr:
            return self.of(node.value, d)
        return _U

    def _name(self, node: ast.Name, d: int) -> frozenset:
        bindings = self.b.resolve(node)
        if not bindings:
            return self._by_name(node.id)
        out: frozenset = _EMPTY
        for bnd in bindings:
            out = out | self._binding(bnd, d)
        return out or _U

    def _by_name(self, name: str) -> frozenset:
        return frozenset({(INDEX, "name")}) if RANK_NAME.match(name) else _U

    def _binding(self, bnd, d: int) -> frozenset:
        k = bnd.kind
        if k == "assign":
            return self.of(bnd.value, d)
        if k == "param":
            out = self._param(bnd, d)
            if bnd.value is not None:
                out = out | self.of(bnd.value, d)
            return out or self._by_name(bnd.name)
        if k == "import":
            if bnd.module and (bnd.level or not bnd.module.startswith(("torch", "os", "sys"))):
                return frozenset({(REF, ("." * bnd.level) + bnd.module)})
            return _U
        if k == "unpack" and bnd.value is not None:
            return self._unpack(bnd, d)
        if k in ("for", "with", "augassign", "unpack"):
            return self._by_name(bnd.name)
        return _U

    def _unpack(self, bnd, d: int) -> frozenset:
        """``rank, world = setup()``: the index-th item of a local function's returned tuples."""
        val = bnd.value
        if isinstance(val, ast.Call) and isinstance(val.func, ast.Name):
            out: frozenset = _EMPTY
            for fb in self.b.resolve(val.func):
                if fb.kind == "def":
                    for r in self.b.returns_of(fb.value):
                        if isinstance(r, ast.Tuple) and bnd.index is not None and bnd.index < len(r.elts):
                            out = out | self.of(r.elts[bnd.index], d)
            if out:
                return out
        return self._by_name(bnd.name)

    def _param(self, bnd, d: int) -> frozenset:
        """Values passed for parameter ``bnd`` at the file's call sites of its function."""
        fn = bnd.stmt
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return _EMPTY
        a = fn.args
        positional = [x.arg for x in a.posonlyargs + a.args]
        info = self.b.functions.get(id(fn))
        is_method = info is not None and info[1] is not None
        try:
            pos = positional.index(bnd.name)
        except ValueError:
            pos = None
        out: frozenset = _EMPTY
        for call in self.calls_of(fn.name):
            offset = 1 if is_method and isinstance(call.func, ast.Attribute) else 0
            val = None
            for kw in call.keywords:
                if kw.arg == bnd.name:
                    val = kw.value
            if val is None and pos is not None:
                i = pos - offset
                if 0 <= i < len(call.args) and not any(isinstance(x, ast.Starred) for x in call.args[: i + 1]):
                    val = call.args[i]
            if val is not None:
                out = out | self.of(val, d)
        return out

    def _attribute(self, node: ast.Attribute, d: int) -> frozenset:
        q = self.qualname(node)
        if q is not None:
            return frozenset({(REF, q)}) if not q.startswith(("torch.", "os.", "sys.")) else _U
        obj = node.value
        out: frozenset = _EMPTY
        if isinstance(obj, ast.Name):
            stores, cls_node = self.b.stores_of(node)
            for val, _stmt in stores:
                out = out | (self.of(val, d) if val is not None else self._by_name(node.attr))
            if out and cls_node is not None:
                return out
            ad = self.arg_defaults.get(node.attr)
            if ad is not None and cls_node is None and all(b.kind != "import" for b in self.b.resolve(obj)):
                if ad.type_name == "int" or (isinstance(ad.value, int) and not isinstance(ad.value, bool)):
                    none = isinstance(ad.node, ast.Constant) and ad.node.value is None  # --gpu, default None: "the current device"
                    out = out | frozenset({(INDEX, "argparse-none" if none else "argparse")})
                else:
                    out = out | self.of(ad.node, d)
            if out:
                return out
        if node.attr in ("device", "device_type"):
            return frozenset({(TENSOR, "")})
        return self._by_name(node.attr)

    def _call(self, node: ast.Call, d: int) -> frozenset:
        f = node.func
        q = self.qualname(f)
        if q is not None:
            if q == "torch.device":
                if not node.args:
                    t = next((k.value for k in node.keywords if k.arg == "type"), None)
                    return self.of(t, d) if t is not None else _U
                first = self.of(node.args[0], d)
                return first
            if q in _CURRENT:
                return frozenset({_CURRENT[q]})
            if q in _RANK_CALLS:
                return frozenset({(INDEX, "rank")})
            if q in _ENV_READS:
                return self._env(node)
            if q.startswith("torch.accelerator.current_accelerator"):
                return frozenset({(ACCEL, "")})
            if q.startswith(("torch.", "os.", "sys.")):
                return _U
            return frozenset({(REF, q + "()")})
        if isinstance(f, ast.Name):
            if f.id in ("int", "str"):
                if node.args:
                    inner = self.of(node.args[0], d)
                    if f.id == "int":
                        return frozenset((INDEX, a[1]) if a[0] == INDEX else a for a in inner if a[0] in (INDEX, REF, UNKNOWN)) or _U
                    return inner
                return _U
            bindings = self.b.resolve(f)
            out: frozenset = _EMPTY
            for bnd in bindings:
                if bnd.kind == "def":
                    for r in self.b.returns_of(bnd.value):
                        out = out | self.of(r, d)
                elif bnd.kind == "import" and bnd.module:
                    out = out | frozenset({(REF, ("." * bnd.level) + bnd.module + "()")})
            return out or _U
        if isinstance(f, ast.Attribute):
            if f.attr == "format" and isinstance(f.value, ast.Constant) and isinstance(f.value.value, str):
                head = f.value.value.split(":")[0]
                atom = parse_device_string(head)
                return frozenset({atom}) if atom and ":" in f.value.value else _U
            if f.attr in ("get_device", "device"):
                return frozenset({(TENSOR, "")})
            # self.helper(): a method of the same class
            obj = f.value
            if isinstance(obj, ast.Name):
                cls_node = self.b.self_class_of(obj)
                if cls_node is not None:
                    out = _EMPTY
                    for st in cls_node.body:
                        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == f.attr:
                            for r in self.b.returns_of(st):
                                out = out | self.of(r, d)
                    if out:
                        return out
        return _U

    def sources(self, node: Optional[ast.AST], depth: int = 0, choice: Optional[ast.IfExp] = None) -> list:
        """The literal expressions ``node`` can evaluate to, as (literal, the conditional expression
        that chooses it or None) pairs, through names (their bindings), ``self.``/object attribute
        stores, argparse defaults, conditional expressions and ``x or default``; e.g. the ``"nccl"`` of
        ``backend = "nccl" if use_gpu else "gloo"`` or of ``args.backend = "nccl"``.  Non-literal
        leaves are left out."""
        if node is None or depth > _MAX_DEPTH:
            return []
        cls = node.__class__
        if cls is ast.Constant:
            return [(node, choice)]
        if cls is ast.IfExp:
            return self.sources(node.body, depth + 1, node) + self.sources(node.orelse, depth + 1, node)
        if cls is ast.BoolOp:
            out: list = []
            for v in node.values:
                out += self.sources(v, depth + 1, choice)
            return out
        if cls is ast.Name:
            out = []
            for bnd in self.b.resolve(node):
                if bnd.kind == "assign" and bnd.value is not None and bnd.value is not node:
                    out += self.sources(bnd.value, depth + 1)
            return out
        if cls is ast.Attribute and isinstance(node.value, ast.Name) and self.qualname(node) is None:
            out = []
            stores, cls_node = self.b.stores_of(node)
            for val, _stmt in stores:
                if val is not None:
                    out += self.sources(val, depth + 1)
            ad = self.arg_defaults.get(node.attr)
            if ad is not None and cls_node is None:
                out += self.sources(ad.node, depth + 1)
            return out
        return []

    def _env(self, node: ast.Call) -> frozenset:
        key = node.args[0] if node.args else None
        if isinstance(key, ast.Constant) and key.value in RANK_ENV:
            return frozenset({(INDEX, "env")})
        return _U

    def _subscript(self, node: ast.Subscript, d: int) -> frozenset:
        v = node.value
        if self.qualname(v) == "os.environ":
            key = node.slice
            if isinstance(key, ast.Constant) and key.value in RANK_ENV:
                return frozenset({(INDEX, "env")})
            return _U
        if isinstance(v, (ast.List, ast.Tuple)):
            out: frozenset = _EMPTY
            for e in v.elts:
                out = out | self.of(e, d)
            return out
        return _U

    def _binop(self, node: ast.BinOp, d: int) -> frozenset:
        left = node.left
        if isinstance(node.op, ast.Mod):
            if isinstance(left, ast.Constant) and isinstance(left.value, str):
                atom = parse_device_string(left.value.split(":")[0]) if ":" in left.value else None
                return frozenset({atom}) if atom else _U
            lv = self.of(left, d)
            if any(a[0] == INDEX for a in lv):
                return frozenset({(INDEX, "modulo")})
            right = node.right
            if isinstance(right, ast.Call) and (self.qualname(right.func) or "").endswith("device_count"):
                return frozenset({(INDEX, "modulo")})
            return _U
        if isinstance(node.op, ast.Add):
            if isinstance(left, ast.Constant) and isinstance(left.value, str) and left.value.endswith(":"):
                atom = parse_device_string(left.value[:-1])
                return frozenset({atom}) if atom else _U
            lv, rv = self.of(left, d), self.of(node.right, d)
            if any(a[0] == INDEX for a in lv | rv) and all(a[0] in (INDEX, UNKNOWN) for a in lv | rv):
                return frozenset({(INDEX, "arith")})
        return _U


def only(value: frozenset, *allowed: str) -> bool:
    return bool(value) and all(a[0] in allowed for a in value)
