"""Branch context: what the guards around a statement mean on an Ascend host.

A guard's test is evaluated three-valued (true / false / unknown) for an
Ascend host running the *migrated* project — device values moved to the NPU,
CUDA-specific tests as written — together with the *kind* of fact it rests on:

``cuda``     ``torch.cuda.is_available()``, ``x.is_cuda``, ``d.type == "cuda"``: false there;
``npu``      ``torch.npu.is_available()``, ``is_torch_npu_available()``, ``d.type == "npu"``,
             ``hasattr(torch, "npu")``: true there;
``cpu``      ``d.type != "cpu"`` / ``== "cpu"`` (a "not CPU" flag is true on an NPU);
``other``    another accelerator: ``torch.xpu.is_available()``, ``torch.backends.mps.is_available()``,
             ``d.type == "xpu"``: false there;
``intent``   a CUDA-only library is usable (``is_xformers_available()``, TensorRT present): false there;
``accel``    ``torch.accelerator.is_available()``: true there.

From the guards of a statement (``if``/``elif``/``else``, early ``return``/``raise``/
``continue`` guards, ``assert``, ``and`` operands, conditional expressions,
``try``/``except ImportError``) :class:`Context` says whether it is CUDA-only
(dead on Ascend: the guard is the finding), NPU-aware (leave it alone), in
another accelerator's branch, the CPU fallback an NPU host falls into, or
CUDA-only by intent.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ascendify.semantic.bindings import Bindings, Guard, statement_of
from ascendify.semantic.devices import CUDA, NPU, OTHER_ACCELERATORS, DeviceValues
from ascendify.semantic.extensions import library_of_name

_CUDA_TESTS = frozenset({"torch.cuda.is_available", "torch.cuda.is_initialized", "torch.backends.cudnn.is_available",
                         "torch.cuda.device_count", "torch.cuda.is_bf16_supported", "torch.backends.cuda.is_built",
                         "torch.cuda.nccl.is_available", "torch.distributed.is_nccl_available"})
_NPU_TESTS = frozenset({"torch.npu.is_available", "torch_npu.npu.is_available", "torch.npu.device_count"})
_NPU_NAMES = re.compile(r"^(is_)?(torch_)?npu_(is_)?available$|^is_torch_npu_available$|^is_npu_available$|^npu_available$|^has_npu$|^is_npu$|^use_npu$", re.IGNORECASE)
_CUDA_NAMES = re.compile(r"^is_torch_cuda_available$|^is_cuda_available$|^cuda_is_available$")
_ACCEL_TESTS = frozenset({"torch.accelerator.is_available", "torch.accelerator.device_count"})
_OTHER_FUNCS = {
    "is_torch_xpu_available": "xpu", "is_xpu_available": "xpu", "is_torch_mps_available": "mps", "is_mps_available": "mps",
    "is_torch_hpu_available": "hpu", "is_hpu_available": "hpu", "is_habana_available": "hpu", "is_torch_mlu_available": "mlu",
    "is_mlu_available": "mlu", "is_torch_musa_available": "musa", "is_musa_available": "musa", "is_torch_xla_available": "xla",
    "is_tpu_available": "xla", "is_torch_tpu_available": "xla",
}
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
_COMPAT_ERRORS = frozenset({"AttributeError", "TypeError", "ImportError", "ModuleNotFoundError", "NotImplementedError"})

T, F, U = True, False, None
_OTHER_TENSOR_FLAGS = frozenset({"is_xpu", "is_mps", "is_xla", "is_mtia", "is_ipu", "is_hpu", "is_maia", "is_vulkan"})
"""Tensor properties testing for another accelerator (``dir(torch.Tensor)`` on torch 2.13; ``is_hpu`` from Habana's plugin)."""


@lru_cache(maxsize=1)
def cuda_only_libs() -> tuple:
    """The CUDA-only library table (``rules/data/cuda_only.toml``): a tuple of dicts."""
    try:
        text = resources.files("ascendify.rules").joinpath("data").joinpath("cuda_only.toml").read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return ()
    return tuple(tomllib.loads(text).get("lib", ()))


@lru_cache(maxsize=1)
def _intent_index() -> tuple:
    avail: dict = {}
    roots: dict = {}
    words: dict = {}
    for lib in cuda_only_libs():
        for a in lib.get("availability", ()):
            avail[a] = lib["name"]
        for m in lib.get("imports", ()):
            roots[m] = lib["name"]  # a dotted prefix (numba.cuda): matched as a module prefix
        for s in lib.get("strings", ()):
            words[s] = lib["name"]
        for s in lib.get("api", ()):
            words[s] = lib["name"]
        for s in lib.get("markers", ()):  # names that mark a branch only (cuda_build)
            words[s] = lib["name"]
    pattern = re.compile("|".join(sorted((re.escape(w) for w in set(words) | set(roots)), key=len, reverse=True))) if words or roots else None
    return avail, roots, words, pattern


@lru_cache(maxsize=1)
def _module_parts() -> dict:
    """word → library for ``module_parts`` (``cuda`` → cuda_build, ``triton`` → triton)."""
    return {w: lib["name"] for lib in cuda_only_libs() for w in lib.get("module_parts", ())}


_NOT_EXTENSION_ROOTS = ("torch", "torchvision", "torchaudio", "torch_npu", "numba", "cupy", "jax", "tensorflow")


def module_library(module: str) -> str:
    """The CUDA-only library a module stands for by its name (``.triton_ops`` → triton,
    ``alignment_train_cuda_binding`` → cuda_build: a project-built extension), or ''."""
    if not module or module.split(".")[0].lstrip(".") in _NOT_EXTENSION_ROOTS:
        return ""
    parts = _module_parts()
    for word in module.rsplit(".", 1)[-1].lower().split("_"):
        if word in parts:
            return parts[word]
    return ""


def library(name: str) -> Optional[dict]:
    for lib in cuda_only_libs():
        if lib["name"] == name:
            return lib
    return None


@dataclass(frozen=True)
class Truth:
    value: Optional[bool]
    kind: Optional[str] = None  # "cuda" | "npu" | "cpu" | "other" | "intent" | "accel"
    detail: str = ""  # the accelerator or library, for other/intent
    origin: Optional[ast.AST] = None  # the expression the fact comes from (e.g. the is_available() call)


_UNKNOWN = Truth(U)


def _not(t: Truth) -> Truth:
    return Truth(None if t.value is None else not t.value, t.kind, t.detail, t.origin)


@dataclass
class Context:
    """What the guards around one node mean on an Ascend host.

    ``dead``: under a guard that is false there because it tests for CUDA (``dead_origin`` is the
    expression that makes it false, e.g. the ``is_available()`` call: what to fix); ``npu_aware``:
    in an NPU branch or the CUDA side of a chain that has one; ``other``: in another accelerator's
    branch; ``intent``: CUDA-only by intent (``intent_lib``); ``cpu_fallback``: the branch an NPU
    host falls into when a CUDA-only guard is false; ``compat``: a fallback for older versions
    (``except AttributeError/ImportError``, the other side of ``hasattr(torch, "accelerator")``);
    ``import_guarded``: in a ``try`` whose handlers catch ``ImportError``.
    """

    dead: bool = False
    dead_origin: Optional[ast.AST] = None
    npu_aware: bool = False
    other: bool = False
    intent: bool = False
    intent_lib: str = ""
    cpu_fallback: bool = False
    compat: bool = False
    import_guarded: bool = False


class Branches:
    def __init__(self, bindings: Bindings, values: DeviceValues, qualname, lines: Optional[list] = None):
        self.b = bindings
        self.values = values
        self.qualname = qualname
        self.lines = lines  # the file's lines: a text pre-check before walking a branch
        self._truth: dict = {}
        self._ctx: dict = {}
        self._intent_body: dict = {}

    # ------------------------------------------------------------------ truth of a test
    def truth(self, test: Optional[ast.AST], depth: int = 0) -> Truth:
        if test is None or depth > 8:
            return _UNKNOWN
        key = id(test)
        hit = self._truth.get(key)
        if hit is None:
            self._truth[key] = _UNKNOWN  # cycles
            hit = self._eval(test, depth + 1)
            if hit.kind is not None and hit.origin is None:
                hit = Truth(hit.value, hit.kind, hit.detail, test)
            self._truth[key] = hit
        return hit

    def _eval(self, t: ast.AST, d: int) -> Truth:
        cls = t.__class__
        if cls is ast.UnaryOp and isinstance(t.op, ast.Not):
            return _not(self.truth(t.operand, d))
        if cls is ast.BoolOp:
            parts = [self.truth(v, d) for v in t.values]
            is_and = isinstance(t.op, ast.And)
            decisive = F if is_and else T
            for p in parts:
                if p.value is decisive:
                    return p
            if all(p.value is (not decisive) for p in parts):
                return parts[0]
            known = [p for p in parts if p.kind is not None]
            return Truth(U, known[0].kind if known else None, known[0].detail if known else "", known[0].origin if known else None)
        if cls is ast.Call:
            return self._call(t, d)
        if cls is ast.Compare:
            return self._compare(t, d)
        if cls is ast.Attribute:
            if t.attr == "is_cuda":
                return Truth(F, "cuda")
            if t.attr in _OTHER_TENSOR_FLAGS and self.qualname(t) is None and not (isinstance(t.value, ast.Name) and self.b.stores_of(t)[0]):
                return Truth(F, "other", t.attr[3:])  # Tensor.is_xpu / is_mps ...: another accelerator's test (dcgan's `input.is_cuda or input.is_xpu`)
            if t.attr in ("is_npu",) and self.qualname(t) is None:
                return Truth(T, "npu")
            q = self.qualname(t)
            if q is not None:
                return self._named(q.rsplit(".", 1)[-1], q)
            return self._stored(t, d)
        if cls is ast.Name:
            return self._name(t, d)
        return _UNKNOWN

    def _named(self, last: str, q: str = "") -> Truth:
        if _NPU_NAMES.match(last):
            return Truth(T, "npu")
        if _CUDA_NAMES.match(last):  # is_torch_cuda_available() (transformers, LLaMA-Factory)
            return Truth(F, "cuda")
        if last in _OTHER_FUNCS:
            return Truth(F, "other", _OTHER_FUNCS[last])
        avail = _intent_index()[0]
        if last in avail:
            return Truth(F, "intent", avail[last])
        return _UNKNOWN

    def _call(self, t: ast.Call, d: int) -> Truth:
        q = self.qualname(t.func)
        if q is not None:
            if q in _CUDA_TESTS:
                return Truth(F, "cuda")
            if q in _NPU_TESTS:
                return Truth(T, "npu")
            if q in _ACCEL_TESTS:
                return Truth(T, "accel")
            parts = q.split(".")
            if len(parts) >= 3 and parts[0] == "torch" and parts[-1] in ("is_available", "device_count"):
                other = parts[-2]
                if other in OTHER_ACCELERATORS:
                    return Truth(F, "other", other)
            return self._named(parts[-1], q)
        f = t.func
        if isinstance(f, ast.Name):
            if f.id == "hasattr" and len(t.args) == 2 and isinstance(t.args[1], ast.Constant):
                attr = t.args[1].value
                if attr == "npu":
                    return Truth(T, "npu")
                if attr in OTHER_ACCELERATORS:
                    return _UNKNOWN  # hasattr(torch, "xpu") is true on recent torch everywhere
            if f.id in ("bool",) and t.args:
                return self.truth(t.args[0], d)
            res = self._named(f.id)
            if res.value is not None:
                return res
            # a local helper returning a test: def use_cuda(): return torch.cuda.is_available()
            for bnd in self.b.resolve(f):
                if bnd.kind == "def":
                    rets = [self.truth(r, d) for r in self.b.returns_of(bnd.value)]
                    if rets and all(r.value is rets[0].value and r.kind == rets[0].kind for r in rets) and rets[0].value is not None:
                        return rets[0]
            return _UNKNOWN
        if isinstance(f, ast.Attribute):
            if f.attr in ("startswith", "__contains__") and t.args and isinstance(t.args[0], ast.Constant):
                return self._device_test(t.args[0].value, True)
            res = self._named(f.attr)
            if res.value is not None:
                return res
        return _UNKNOWN

    def _device_test(self, lit: object, eq: bool) -> Truth:
        """``d.type == lit`` (``eq``) / ``!=`` on an Ascend host after migration."""
        if not isinstance(lit, str):
            return _UNKNOWN
        base = lit.split(":")[0]
        if base == CUDA:
            return Truth(F if eq else T, "cuda")
        if base == NPU:
            return Truth(T if eq else F, "npu")
        if base == "cpu":
            return Truth(F if eq else T, "cpu")
        if base in OTHER_ACCELERATORS:
            return Truth(F if eq else T, "other", base)
        return _UNKNOWN

    def _compare(self, t: ast.Compare, d: int) -> Truth:
        if len(t.ops) != 1:
            return _UNKNOWN
        op = t.ops[0]
        left, right = t.left, t.comparators[0]
        if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            eq = isinstance(op, (ast.Eq, ast.Is))
            for lit, other in ((right, left), (left, right)):
                if isinstance(lit, ast.Constant) and isinstance(lit.value, str):
                    return self._device_test(lit.value, eq)
            return _UNKNOWN
        if isinstance(op, (ast.In, ast.NotIn)):
            pos = isinstance(op, ast.In)
            if isinstance(left, ast.Constant) and isinstance(left.value, str):  # "cuda" in str(d)
                return self._device_test(left.value, pos)
            if isinstance(right, (ast.Tuple, ast.List, ast.Set)):  # d.type in ("cuda", "xpu")
                lits = [e.value for e in right.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                bases = {x.split(":")[0] for x in lits}
                if NPU in bases:
                    return Truth(pos, "npu")
                if CUDA in bases:
                    return Truth(not pos, "cuda")
                if "cpu" in bases:
                    return Truth(not pos, "cpu")
                others = bases & set(OTHER_ACCELERATORS)
                if others:
                    return Truth(not pos, "other", sorted(others)[0])
            return _UNKNOWN
        if isinstance(op, (ast.Gt, ast.GtE, ast.Lt, ast.LtE)):  # torch.cuda.device_count() > 0
            for side in (left, right):
                if isinstance(side, ast.Call):
                    inner = self._call(side, d)
                    if inner.kind is not None:
                        value = inner.value if (side is left) == isinstance(op, (ast.Gt, ast.GtE)) else U
                        return Truth(value, inner.kind, inner.detail, side)
        return _UNKNOWN

    def _name(self, t: ast.Name, d: int) -> Truth:
        bindings = self.b.resolve(t)
        vals = [self.truth(bd.value, d) for bd in bindings if bd.kind == "assign" and bd.value is not None]
        if vals and len(vals) == len(bindings):
            first = vals[0]
            if all(v.value is first.value and v.kind == first.kind for v in vals):
                return first
            return _UNKNOWN
        if not bindings or _NPU_NAMES.match(t.id):  # a flag named for the NPU: `if use_npu:`
            return self._named(t.id)
        return _UNKNOWN

    def _stored(self, t: ast.Attribute, d: int) -> Truth:
        """``self.use_cuda`` / ``args.cuda``: the value stored there (all stores must agree)."""
        if not isinstance(t.value, ast.Name):
            return _UNKNOWN
        stores, _cls = self.b.stores_of(t)
        if not stores or _NPU_NAMES.match(t.attr):
            return self._named(t.attr)
        vals = [self.truth(v, d) for v, _s in stores if v is not None]
        if vals and len(vals) == len(stores) and all(v.value is vals[0].value and v.kind == vals[0].kind for v in vals):
            return vals[0]
        return _UNKNOWN

    # ------------------------------------------------------------------ context of a node
    def guards_of(self, node: ast.AST) -> list:
        """Expression-level and statement-level guards of ``node``, innermost first."""
        out: list = []
        child = node
        # a statement's own guards are its StmtInfo's (not those of the statement holding it)
        p = node if isinstance(node, (ast.stmt, ast.ExceptHandler)) else getattr(node, "_asc_parent", None)
        while p is not None and not isinstance(p, (ast.stmt, ast.ExceptHandler)):
            pc = p.__class__
            if pc is ast.IfExp:
                if child is p.body:
                    out.append(Guard(p.test, True, "ifexp", p))
                elif child is p.orelse:
                    out.append(Guard(p.test, False, "ifexp", p))
            elif pc is ast.BoolOp:
                is_and = isinstance(p.op, ast.And)
                for v in p.values:
                    if v is child:
                        break
                    out.append(Guard(v, is_and, "and", p))
            child, p = p, getattr(p, "_asc_parent", None)
        stmt = p if p is not None else statement_of(node)
        # the test of an `if`/`while` is evaluated under the statement's own guards only
        info = self.b.info(stmt) if stmt is not None else None
        if info is not None:
            out.extend(reversed(info.guards))
        return out

    def context(self, node: ast.AST) -> Context:
        key = id(node)
        hit = self._ctx.get(key)
        if hit is not None:
            return hit
        ctx = Context()
        for g in self.guards_of(node):
            if g.kind == "try":
                if _IMPORT_ERRORS & set(g.handlers):
                    ctx.import_guarded = True
                continue
            if g.kind == "except":
                if _COMPAT_ERRORS & set(g.handlers):
                    ctx.compat = True
                continue
            if not g.polarity and _probes_new_torch(g.test):  # `X if hasattr(torch, "accelerator") else <old API>`
                ctx.compat = True
                continue
            t = self.truth(g.test)
            if t.kind is None:
                lib = self._intent_of_branch(g)
                if lib:
                    ctx.intent, ctx.intent_lib = True, ctx.intent_lib or lib
                continue
            eff = t.value if g.polarity else (None if t.value is None else not t.value)
            if t.kind == "npu":  # the NPU branch, or the other side of a test for it: code that dispatches per device
                ctx.npu_aware = True
            elif t.kind == "cuda":
                if eff is False:
                    lib = self._reaches_cuda_only(g)
                    if self._chain_has_npu(g):
                        ctx.npu_aware = True
                    elif lib:  # `if x.is_cuda: <project-built CUDA extension / Triton kernel>`: intent, it stays
                        ctx.intent, ctx.intent_lib = True, ctx.intent_lib or lib
                    elif not ctx.dead:
                        ctx.dead, ctx.dead_origin = True, t.origin
                elif eff is True and t.value is not None:
                    ctx.cpu_fallback = True
            elif t.kind == "other" and eff is False and g.polarity:
                ctx.other = True
            elif t.kind == "intent" and eff is False:
                ctx.intent, ctx.intent_lib = True, ctx.intent_lib or t.detail
        if not ctx.npu_aware:
            stmt = statement_of(node)
            if isinstance(stmt, ast.If) and stmt.test is not node and _inside(node, stmt.test) and self._chain_has_npu(Guard(stmt.test, True, "if", stmt)):
                ctx.npu_aware = True  # `if torch.cuda.is_available(): ... elif is_torch_npu_available(): ...`
            elif isinstance(stmt, ast.If) and stmt.test is node and self._chain_has_npu(Guard(stmt.test, True, "if", stmt)):
                ctx.npu_aware = True
        self._ctx[key] = ctx
        return ctx

    def _chain_has_npu(self, g: Guard) -> bool:
        """The ``if``/``elif`` chain around ``g`` (or the statements next to it) has an NPU branch."""
        node = g.node
        if not isinstance(node, ast.If):  # an `and` operand or conditional expression inside an `if` test
            node = statement_of(node)
            if not isinstance(node, ast.If):
                return False
        top = node
        p = getattr(top, "_asc_parent", None)
        while isinstance(p, ast.If) and len(p.orelse) == 1 and p.orelse[0] is top:
            top, p = p, getattr(p, "_asc_parent", None)
        cur: Optional[ast.If] = top
        while cur is not None:
            if self.truth(cur.test).kind == "npu" or _mentions_npu(cur.test):
                return True
            cur = cur.orelse[0] if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If) else None
        body = block_of(top)
        if body is not None:
            i = next((k for k, s in enumerate(body) if s is top), -1)
            for s in body[max(i - 1, 0): i] + body[i + 1: i + 3]:
                if isinstance(s, ast.If) and (self.truth(s.test).kind == "npu" or _mentions_npu(s.test)):
                    return True
        return False

    def _reaches_cuda_only(self, g: Guard) -> str:
        """The CUDA-only code the branch ``g`` leads into, by what it calls: a module named for a CUDA
        extension or Triton (:func:`module_library`), imported there or in the file, or a function of
        the file decorated with ``@triton.jit`` (also launched as ``kernel[grid](...)``); or ''."""
        if g.kind != "if" or not isinstance(g.node, ast.If):
            return ""
        key = ("reach", id(g.node), g.polarity)
        hit = self._intent_body.get(key)
        if hit is not None:
            return hit
        lib = ""
        body = g.node.body if g.polarity else g.node.orelse
        for s in body:
            for n in ast.walk(s):
                if n.__class__ is ast.ImportFrom:
                    lib = module_library(("." * (n.level or 0)) + (n.module or ""))
                elif n.__class__ is ast.Import:
                    lib = next((m for m in (module_library(a.name) for a in n.names) if m), "")
                elif n.__class__ is ast.Call:
                    lib = self._callee_library(n.func)
                if lib:
                    break
            if lib:
                break
        self._intent_body[key] = lib
        return lib

    def _callee_library(self, f: ast.AST) -> str:
        if f.__class__ is ast.Subscript:  # kernel[grid](...): a Triton launch
            f = f.value
        while f.__class__ is ast.Attribute:
            f = f.value
        if f.__class__ is not ast.Name:
            return ""
        for bnd in self.b.resolve(f):
            if bnd.kind == "import":
                lib = module_library(("." * bnd.level) + (bnd.module or ""))
                if not lib and bnd.module and "." in bnd.module:  # from pkg.triton_ops import kernel
                    lib = module_library(bnd.module.rsplit(".", 1)[0])
                if not lib and bnd.module and not bnd.level:  # amp_C.multi_tensor_..., cupy.RawKernel, trt.Builder
                    m = bnd.module
                    lib = next((name for root, name in _intent_index()[1].items() if m == root or m.startswith(root + ".")), "")
                if lib:
                    return lib
            elif bnd.kind == "assign":  # fused = load("fused", sources=[... .cu]); k = cp.RawKernel(...)
                lib = library_of_name(f, self.b)
                if lib:
                    return lib
            elif bnd.kind == "def":
                for d in getattr(bnd.value, "decorator_list", ()):
                    root = d.func if isinstance(d, ast.Call) else d
                    while root.__class__ is ast.Attribute:
                        root = root.value
                    if root.__class__ is ast.Name and root.id == "triton":
                        return "triton"
        return ""

    def _intent_of_branch(self, g: Guard) -> str:
        """The CUDA-only library a branch of unknown truth exists for (``if args.trt: ... trt.Builder``), or ''."""
        if g.kind != "if" or not isinstance(g.node, ast.If):
            return ""
        key = (id(g.node), g.polarity)
        hit = self._intent_body.get(key)
        if hit is not None:
            return hit
        pattern = _intent_index()[3]
        lib = ""
        if pattern is not None and self.lines is not None:
            node = g.node
            text = "".join(self.lines[node.lineno - 1: getattr(node, "end_lineno", node.lineno) or node.lineno])
            if pattern.search(text) is None:  # no library name anywhere in the `if`: nothing to walk
                pattern = None
        if pattern is not None:
            words = _intent_index()[2]
            roots = _intent_index()[1]
            for n in ast.walk(g.test):
                name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) else None
                if name is None:
                    continue
                for w, libname in list(words.items()) + [(r, n) for r, n in roots.items() if "." not in r]:
                    if name == w or (len(w) > 3 and isinstance(name, str) and re.search(r"(^|_)" + re.escape(w.lower()) + r"($|_)", name.lower())):
                        lib = libname
                        break
                if lib:
                    break
            if not lib:
                body = g.node.body if g.polarity else g.node.orelse
                for s in body:
                    for n in ast.walk(s):
                        if isinstance(n, (ast.Import, ast.ImportFrom)):
                            mods = [a.name for a in n.names] if isinstance(n, ast.Import) else [n.module or ""]
                            for m in mods:
                                for root, libname in roots.items():
                                    if m == root or m.startswith(root + "."):
                                        lib = libname
                        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                            if n.value in words:
                                lib = words[n.value]
                            elif isinstance(s, ast.Raise) or len(n.value) > 12:  # "xformers needs a CUDA device"
                                m = _word_pattern().search(n.value)
                                if m:
                                    lib = words.get(m.group(1)) or next((v for k, v in roots.items() if k == m.group(1)), "")
                        elif isinstance(n, ast.Attribute) and n.attr in words:
                            lib = words[n.attr]
                        if lib:
                            break
                    if lib:
                        break
        self._intent_body[key] = lib
        return lib


@lru_cache(maxsize=1)
def _word_pattern():
    """Whole-word library names (longer than 3 characters) inside a message string."""
    _avail, roots, words, _p = _intent_index()
    names = sorted({w for w in list(words) + [r for r in roots if "." not in r] if len(w) > 3 and w.isidentifier()}, key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b") if names else re.compile(r"(?!x)x")


_NEW_TORCH_ATTRS = frozenset({"accelerator", "get_device_module", "amp", "compiler", "get_autocast_dtype"})


def _probes_new_torch(test: ast.AST) -> bool:
    """``hasattr(torch, "accelerator")``: the other branch is a fallback for an older torch."""
    return (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "hasattr" and len(test.args) == 2
            and isinstance(test.args[1], ast.Constant) and test.args[1].value in _NEW_TORCH_ATTRS)


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    n = node
    while n is not None:
        if n is outer:
            return True
        n = getattr(n, "_asc_parent", None)
    return False


_NPU_WORD = re.compile(r"(?:(?:^|_)(?:npu|NPU|Npu)|(?<=[a-z0-9])(?:Npu|NPU))(?:s|S)?(?=$|_|\d|[A-Z])")
"""``npu`` as a word of an identifier (``use_npu``, ``npu_ok``, ``isNpu``, ``NPUS``), not inside
another word: ``input`` and ``inputs`` (i-n-p-u-t) name no NPU."""


def npu_word(name: str) -> bool:
    """``name`` has ``npu`` as one of its words (see :data:`_NPU_WORD`)."""
    return _NPU_WORD.search(name) is not None


def _mentions_npu(test: ast.AST) -> bool:
    for n in ast.walk(test):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and (n.value == "npu" or n.value.startswith("npu:")):
            return True
        if isinstance(n, ast.Name) and _NPU_WORD.search(n.id):
            return True
        if isinstance(n, ast.Attribute) and _NPU_WORD.search(n.attr) and not isinstance(n.value, ast.Name) or isinstance(n, ast.Attribute) and n.attr.lower().startswith(("is_npu", "use_npu", "npu_")):
            return True
    return False


def block_of(stmt: ast.AST) -> Optional[list]:
    """The statement list (body, orelse or finalbody) that holds ``stmt``."""
    p = getattr(stmt, "_asc_parent", None)
    for field in ("body", "orelse", "finalbody"):
        b = getattr(p, field, None)
        if isinstance(b, list) and any(s is stmt for s in b):
            return b
    return None
