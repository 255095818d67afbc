"""Library summaries: which public functions and classes of a Python library do CUDA work.

The analysis reads a library's source (a dict module name -> text, as unpacked from
its release) with :mod:`ast` only; nothing is imported or run.  For each function,
method and class (its ``__init__``) it finds the CUDA work done in its own body:

* calls of ``torch.cuda.*`` (not the queries ``is_available``, ``is_initialized``,
  ``device_count``, ``is_bf16_supported``), ``.cuda()``;
* device strings ``"cuda"``/``"cuda:N"`` passed as a device (``device="cuda"``,
  ``torch.device("cuda")``, ``.to("cuda")``, ``GradScaler("cuda")``,
  ``autocast("cuda")`` / ``device_type="cuda"``) or as a parameter default;
* the ``"nccl"`` backend;
* calls into CUDA-only packages (xformers, flash_attn, bitsandbytes, apex, amp_C, triton,
  cupy), ``torch.utils.cpp_extension`` builds, and the package's own native roots
  (``roots``, e.g. bitsandbytes' ``lib``);

then follows the calls it makes inside the library (by name: module functions, classes,
``self.method``, ``super().__init__``, bases' methods) to a bounded fixpoint.

Two things keep the summary honest:

* work under a CUDA test (``if torch.cuda.is_available():``, ``x.is_cuda``,
  ``device.type == "cuda"``) is dead on an Ascend host and not counted;
* a function that names the NPU (``is_torch_npu_available``, ``is_npu_available``,
  ``torch.npu``, ``torch_npu``, a ``"npu"`` string, ``hasattr(torch, "npu")``, DeepSpeed's
  ``get_accelerator()``) is *npu-aware*: it has an Ascend path, so its work is not
  reported and does not flow to its callers.

Work under ``if <parameter>:`` (or a local read from ``kwargs.pop("name")``) is
conditional on that keyword: the call site is reported only when the caller passes it.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from ascendify.semantic.bindings import dotted as _dotted

CUDA_QUERIES = frozenset({"is_available", "is_initialized", "device_count", "is_bf16_supported", "_is_compiled"})
CUDA_ONLY_PACKAGES = ("xformers", "flash_attn", "flash_attn_2_cuda", "flash_attn_cuda", "bitsandbytes", "apex", "amp_C",
                      "triton", "cupy", "pycuda", "fused_layer_norm_cuda", "xformers_C")
NPU_NAMES = frozenset({"is_torch_npu_available", "is_npu_available", "torch_npu", "get_accelerator", "is_npu"})
MAX_WORK = 4
STATE = "~"
"""The condition of work under a test of state the call site cannot see (an attribute, a local)."""
MAX_DEPTH = 8
_CUDA_TEST_ATTRS = frozenset({"is_cuda"})


def _is_cuda_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and (
        node.value == "cuda" or node.value.startswith("cuda:"))


class _Module:
    def __init__(self, name: str, tree: ast.Module, is_pkg: bool, path: str):
        self.name = name
        self.tree = tree
        self.path = path
        self.is_pkg = is_pkg
        self.imports: Dict[str, str] = {}  # local name -> qualified name
        self.exports: Dict[str, str] = {}  # public name -> qualified (module-level imports)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.imports[a.asname] = a.name
                    else:
                        self.imports[a.name.split(".")[0]] = a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(node.module or "", node.level or 0)
                for a in node.names:
                    if a.name == "*":
                        continue
                    q = f"{base}.{a.name}" if base else a.name
                    self.imports[a.asname or a.name] = q
        for node in tree.body:
            for st in _flat(node):
                if isinstance(st, ast.ImportFrom):
                    base = self._absolute(st.module or "", st.level or 0)
                    for a in st.names:
                        if a.name != "*":
                            self.exports[a.asname or a.name] = f"{base}.{a.name}" if base else a.name

    def _absolute(self, module: str, level: int) -> str:
        if not level:
            return module
        parts = self.name.split(".")
        if not self.is_pkg:
            parts = parts[:-1]
        parts = parts[: len(parts) - (level - 1)] if level > 1 else parts
        return ".".join(parts + ([module] if module else []))

    def qual(self, node: ast.AST) -> Optional[str]:
        d = _dotted(node)
        if d is None:
            return None
        head, _, rest = d.partition(".")
        if head in self.imports:
            q = self.imports[head]
            return f"{q}.{rest}" if rest else q
        return None


def _flat(node: ast.AST):
    """Module-level statements, looking into if/try blocks (conditional imports)."""
    if isinstance(node, (ast.If, ast.Try)):
        for part in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", []),
                     *[h.body for h in getattr(node, "handlers", [])]):
            for st in part:
                yield from _flat(st)
    else:
        yield node


class _Def:
    __slots__ = ("qual", "kind", "node", "module", "cls", "own", "calls", "npu", "params", "bases", "npu_when")

    def __init__(self, qual, kind, node, module, cls=None):
        self.qual = qual
        self.kind = kind
        self.node = node
        self.module = module
        self.cls = cls
        self.own: List[Tuple[str, int, Optional[str]]] = []  # (what, line, condition keyword or None)
        self.calls: List[tuple] = []  # (target qualname or "self.x"/"super.x", condition, what the call passes)
        self.npu = False
        self.params: set = set()
        self.bases: List[str] = []
        self.npu_when: List[str] = []  # parameters whose value "npu" takes the def's own NPU path


def _cuda_test(test: ast.AST) -> bool:
    """Is ``test`` a CUDA availability/placement test (false on an Ascend host)?"""
    for n in ast.walk(test):
        if isinstance(n, ast.Attribute) and (n.attr in _CUDA_TEST_ATTRS or (
                n.attr == "is_available" and isinstance(n.value, ast.Attribute) and n.value.attr == "cuda")):
            return True
        if isinstance(n, ast.Compare) and any(_is_cuda_str(c) for c in [n.left, *n.comparators]):
            return True
    return False


def _availability_test(test: ast.AST) -> bool:
    """``if has_apex:`` / ``if is_xformers_available():`` / ``if HAS_TRITON``, and tests of a
    bitsandbytes/xformers/flash_attn/apex object or flag (``is_loaded_in_8bit``,
    ``isinstance(m, bnb.nn.Linear8bitLt)``): the library's own optional path, taken only where
    that package is installed or its model loaded (the user's import or option is the finding)."""
    for n in ast.walk(test):
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else None
        if name and (name.lower().lstrip("_").startswith("has_") or "available" in name.lower()):
            return True
        if name and any(t in name.lower() for t in ("8bit", "4bit", "bnb", "xformers", "flash_attn", "apex")):
            return True  # is_loaded_in_8bit, isinstance(m, bnb.nn.Linear8bitLt): a quantized/CUDA-only model's path
    return False


_COMPAT_ERRORS = frozenset({"AttributeError", "TypeError", "ImportError", "ModuleNotFoundError"})
_BROAD_ERRORS = frozenset({"Exception", "BaseException", "RuntimeError", "AssertionError"})


def _version_test(test: ast.AST) -> bool:
    """``if _is_torch_greater_or_equal_than_2_7`` / ``if is_torch_version(">=", ...)``: the other
    branch is the fallback for older releases."""
    for n in ast.walk(test):
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else None
        if name and any(t in name.lower() for t in ("version", "greater", "_or_equal", "less_than", "older", "newer")):
            return True
    return False


def _reraises(h: ast.ExceptHandler) -> bool:
    return any(isinstance(x, ast.Raise) for x in ast.walk(h))


def _npu_mark(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in NPU_NAMES:
            return True
        if isinstance(n, ast.Attribute) and (n.attr == "npu" or n.attr in NPU_NAMES):
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and (n.value == "npu" or n.value.startswith("npu:")):
            return True
    return False


def _param_npu_test(test: ast.AST, params: set) -> Optional[str]:
    """The parameter of a ``param == "npu"`` / ``param in ("npu", ...)`` test, else None."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.In))):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(right, ast.Name) and isinstance(left, ast.Constant):
        left, right = right, left
    if not (isinstance(left, ast.Name) and left.id in params):
        return None
    vals = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
    if any(isinstance(v, ast.Constant) and v.value == "npu" for v in vals):
        return left.id
    return None


def _npu_gate(fn: ast.AST, params: set) -> Optional[set]:
    """The parameters whose ``== "npu"`` tests hold every NPU mark of ``fn`` (the test itself and its
    branch: ultralytics' ``autocast(enabled, device="cuda")`` takes torch_npu's autocast only under
    ``if device == "npu":``), or None when a mark is elsewhere (the def names the NPU whatever it is passed)
    or a gating parameter is assigned in the body."""
    gates: set = set()
    loose = [False]

    def walk(node: ast.AST) -> None:
        if isinstance(node, (ast.If, ast.IfExp)):
            p = _param_npu_test(node.test, params)
            if p is not None:
                gates.add(p)
                for x in (node.orelse if isinstance(node.orelse, list) else [node.orelse]):
                    walk(x)
                return
        if isinstance(node, (ast.Name, ast.Attribute, ast.Constant)) and _npu_mark(node) and not (
                isinstance(node, ast.Attribute) and not (node.attr == "npu" or node.attr in NPU_NAMES)):
            loose[0] = True
            return
        for c in ast.iter_child_nodes(node):
            walk(c)

    for st in fn.body:
        walk(st)
    if loose[0] or not gates:
        return None
    for n in ast.walk(fn):  # a gating parameter set from elsewhere (not a literal such as mps's "cpu")
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            names = [x for t in targets for x in ast.walk(t) if isinstance(x, ast.Name) and x.id in gates]
            v = n.value
            literal = v is not None and all(isinstance(x, (ast.Constant, ast.Tuple, ast.List)) for x in ast.walk(v)
                                            if not isinstance(x, (ast.expr_context,)))
            if names and not literal:
                return None
        else:
            bound = ([n.target] if isinstance(n, (ast.For, ast.AsyncFor, ast.NamedExpr)) else
                     [it.optional_vars for it in n.items if it.optional_vars is not None] if isinstance(n, (ast.With, ast.AsyncWith)) else [])
            if any(isinstance(x, ast.Name) and x.id in gates for t in bound for x in ast.walk(t)):
                return None
    return gates


class _Walker:
    """Collects one function's own work and calls, with the condition each runs under."""

    def __init__(self, d: _Def, mod: _Module, roots: Tuple[str, ...]):
        self.d = d
        self.mod = mod
        self.roots = roots
        self.flags: Dict[str, Tuple[str, bool]] = {}  # local name -> (keyword, default truthy)

    def run(self) -> None:
        fn = self.d.node
        args = fn.args
        allargs = args.posonlyargs + args.args + args.kwonlyargs
        self.d.params = {a.arg for a in allargs}
        positional_all = list(args.posonlyargs + args.args)
        pairs = list(zip(positional_all[::-1], list(args.defaults)[::-1])) + [
            (a, dflt) for a, dflt in zip(args.kwonlyargs, args.kw_defaults) if dflt is not None]
        for a, dflt in pairs:  # flag parameters: a bool/None default (use_prefetcher=True, load_in_8bit=False)
            if isinstance(dflt, ast.Constant) and (dflt.value is None or isinstance(dflt.value, bool)):
                self.flags[a.arg] = (a.arg, bool(dflt.value))
        positional = list(args.posonlyargs + args.args)
        skip = 1 if positional and positional[0].arg in ("self", "cls") else 0
        for a, default in zip(positional[::-1], list(args.defaults)[::-1]):
            if _is_cuda_str(default):  # "!name@pos": work only when the caller leaves the parameter out
                self.d.own.append((f'default {a.arg}="{default.value}"', default.lineno, f"!{a.arg}@{positional.index(a) - skip}"))
        for a, default in zip(args.kwonlyargs, args.kw_defaults):
            if default is not None and _is_cuda_str(default):
                self.d.own.append((f'default {a.arg}="{default.value}"', default.lineno, f"!{a.arg}@-1"))
        for st in fn.body:
            self.stmt(st, None)

    def _condition(self, test: ast.AST, negate: bool = False) -> Optional[str]:
        """``"kw:W:D"`` for a test of a flag parameter (or a local read from ``kwargs.pop("kw")``):
        the body runs when ``kw`` is truthy (W=T) or falsy (W=F); D is the default's truthiness."""
        when = not negate
        t = test
        while isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            when = not when
            t = t.operand
        if (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], (ast.Is, ast.IsNot))
                and isinstance(t.comparators[0], ast.Constant) and t.comparators[0].value is None):
            when = when if isinstance(t.ops[0], ast.IsNot) else not when  # `x is None`: runs when x is falsy
            t = t.left
        # only the flag itself (or an operand of and/or) is a flag test: `args.fp16` with `args=None`
        # tests the object's state, not the flag
        for n in ([t] if not isinstance(t, ast.BoolOp) else list(t.values)):
            key = n.id if isinstance(n, ast.Name) else (
                n.attr if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self" else None)
            if key in self.flags:  # the parameter, or self.<name> (``self.offloading = offloading``)
                kw, default = self.flags[key]
                w = when if n is t else True  # an operand of a larger test: taken as "when it is set"
                return f"{kw}:{'T' if w else 'F'}:{'T' if default else 'F'}"
        return None

    def stmt(self, st: ast.AST, cond: Optional[str]) -> None:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return  # nested definitions run when called; not followed
        if isinstance(st, ast.If):
            if _cuda_test(st.test):
                for s in st.orelse:
                    self.stmt(s, cond)
                return
            self.expr(st.test, cond)
            if _availability_test(st.test):
                for s in st.orelse:
                    self.stmt(s, cond)
                return
            if _version_test(st.test):
                for s in st.body:
                    self.stmt(s, cond)
                return
            # a flag parameter's test has a known polarity; any other test (self.sharded_ddp, args.fp16,
            # opt_name == "fusedadam") depends on state the call site cannot see: STATE, never reported
            c = cond or self._condition(st.test) or STATE
            for s in st.body:
                self.stmt(s, c)
            c2 = cond or self._condition(st.test, negate=True) or STATE
            for s in st.orelse:
                self.stmt(s, c2)
            return
        if isinstance(st, ast.Try):
            broad = any(h.type is None or any(isinstance(t, ast.Name) and t.id in _BROAD_ERRORS
                                              for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]))
                        for h in st.handlers if not _reraises(h))
            for s in (st.orelse + st.finalbody) if broad else (st.body + st.orelse + st.finalbody):
                self.stmt(s, cond)  # a body under `except Exception:` that falls back cannot fail there
            for h in st.handlers:
                types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type] if h.type is not None else []
                if types and all(isinstance(t, ast.Name) and t.id in _COMPAT_ERRORS for t in types):
                    continue  # a fallback for older versions / missing packages
                for s in h.body:
                    self.stmt(s, cond)
            return
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            v = st.value
            if (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in ("pop", "get")
                    and isinstance(v.func.value, ast.Name) and v.args and isinstance(v.args[0], ast.Constant)
                    and isinstance(v.args[0].value, str)):
                dflt = v.args[1] if len(v.args) > 1 else None
                if dflt is None or (isinstance(dflt, ast.Constant) and (dflt.value is None or isinstance(dflt.value, bool))):
                    self.flags[st.targets[0].id] = (v.args[0].value, bool(dflt.value) if dflt is not None else False)
        for field, value in ast.iter_fields(st):
            if isinstance(value, list):
                for x in value:
                    if isinstance(x, ast.stmt):
                        self.stmt(x, cond)
                    elif isinstance(x, ast.AST):
                        self.expr(x, cond)
            elif isinstance(value, ast.stmt):
                self.stmt(value, cond)
            elif isinstance(value, ast.AST):
                self.expr(value, cond)

    def expr(self, node: ast.AST, cond: Optional[str]) -> None:
        if isinstance(node, (ast.Lambda,)):
            return
        if isinstance(node, ast.IfExp):
            self.expr(node.test, cond)
            known = _cuda_test(node.test) or _version_test(node.test)
            if not _cuda_test(node.test):
                self.expr(node.body, cond or (None if known else self._condition(node.test) or STATE))
            if not _version_test(node.test):
                self.expr(node.orelse, cond or (None if known else self._condition(node.test, negate=True) or STATE))
            return
        if isinstance(node, ast.BoolOp):
            for i, v in enumerate(node.values):
                if isinstance(node.op, ast.And) and _cuda_test(v):
                    return
                self.expr(v, cond if i == 0 else (cond or STATE))  # later operands run depending on earlier ones
            return
        if isinstance(node, ast.Call):
            self.call(node, cond)
        for child in ast.iter_child_nodes(node):
            self.expr(child, cond)

    def call(self, node: ast.Call, cond: Optional[str]) -> None:
        d = self.d
        f = node.func
        q = self.mod.qual(f)
        line = node.lineno
        if q is not None:
            if q.startswith("torch.cuda."):
                last = q.rsplit(".", 1)[1]
                if last not in CUDA_QUERIES:
                    d.own.append((q, line, cond))
                return
            root = q.split(".")[0]
            if root in CUDA_ONLY_PACKAGES and root != self.mod.name.split(".")[0]:
                d.own.append((q, line, cond))
                return
            if q.startswith("torch.utils.cpp_extension.") and q.rsplit(".", 1)[1] in ("load", "load_inline", "CUDAExtension"):
                d.own.append((q, line, cond))
                return
            if any(q == r or q.startswith(r + ".") for r in self.roots):
                d.own.append((q, line, cond))
                return
            if q.split(".")[0] == self.mod.name.split(".")[0]:
                d.calls.append((q, cond, _passed(node)))
        elif isinstance(f, ast.Name):
            d.calls.append((f"{self.mod.name}.{f.id}", cond, _passed(node)))
        elif isinstance(f, ast.Attribute):
            v = f.value
            if isinstance(v, ast.Name) and v.id in ("self", "cls"):
                d.calls.append((f"self.{f.attr}", cond, _passed(node)))
            elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super":
                d.calls.append((f"super.{f.attr}", cond, _passed(node)))
            if f.attr == "cuda" and q is None:
                d.own.append((".cuda()", line, cond))
        # device strings and backends
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name in ("to", "device", "GradScaler", "autocast") and node.args and _is_cuda_str(node.args[0]):
            d.own.append((f'{name}("{node.args[0].value}")', line, cond))
        for k in node.keywords:
            if k.arg in ("device", "device_type", "map_location") and _is_cuda_str(k.value):
                d.own.append((f'{k.arg}="{k.value.value}"', line, cond))
            elif k.arg == "backend" and isinstance(k.value, ast.Constant) and k.value.value == "nccl":
                d.own.append(('backend="nccl"', line, cond))
        if name in ("init_process_group", "new_group") and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "nccl":
            d.own.append(('backend "nccl"', line, cond))


def _truth(node: ast.AST) -> Optional[bool]:
    return bool(node.value) if isinstance(node, ast.Constant) else None


def _passed(call: ast.Call) -> tuple:
    """({keyword: truthiness of a constant value or None}, number of positional arguments,
    passes *args/**kwargs) of a call."""
    star = any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args)
    return {k.arg: _truth(k.value) for k in call.keywords if k.arg}, len(call.args), star


def _passes(passed: tuple, cond: str) -> bool:
    """Does a call with ``passed`` give the parameter of the ``!name@pos`` condition?"""
    kws, npos, star = passed
    name, _, pos = cond[1:].partition("@")
    return star or name in kws or (pos != "" and int(pos) >= 0 and npos > int(pos))


def flag_runs(cond: str, kws: dict, star: bool) -> bool:
    """Does work under the flag condition ``kw:W:D`` run for a call passing ``kws`` (keyword ->
    truthiness or None when not a constant)?  Unknown values count as running."""
    kw, when, default = cond.split(":")
    if kw in kws:
        v = kws[kw]
        return v is None or v == (when == "T")
    if star:
        return True
    return (default == "T") == (when == "T")


def _public(qual: str) -> bool:
    return not any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in qual.split("."))


def analyze(sources: Dict[str, Tuple[str, str]], roots: Tuple[str, ...] = ()) -> dict:
    """Summaries of one library.

    ``sources``: module name (``timm.utils.cuda``; a package's ``__init__`` is the package
    name) -> (path shown in locations, source text).  ``roots``: qualified names whose calls
    are the library's own native CUDA code (e.g. ``bitsandbytes.cextension.lib``).

    Returns ``{"entries": {qualname: entry}, "aliases": {public name: qualname},
    "bases": {class: [base qualnames]}}``; an entry is ``{"kind": "function"|"class"|"method",
    "file": path, "line": int, "work": [[what, path, line, condition or ""], ...]}`` or, for
    an npu-aware def that would otherwise do work, ``{"kind": ..., "npu_aware": true, ...}``.
    Files that do not parse are skipped.
    """
    mods: Dict[str, _Module] = {}
    for name, (path, text) in sorted(sources.items()):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        mods[name] = _Module(name, tree, path.endswith("__init__.py"), path)
        mods[name].mentions_npu = "npu" in text or "get_accelerator" in text
    defs: Dict[str, _Def] = {}
    for mname, mod in mods.items():
        for st in mod.tree.body:
            for node in _flat(st):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    defs[f"{mname}.{node.name}"] = _Def(f"{mname}.{node.name}", "function", node, mod)
                elif isinstance(node, ast.ClassDef):
                    cq = f"{mname}.{node.name}"
                    c = _Def(cq, "class", node, mod)
                    c.bases = [b for b in (mod.qual(x) or (f"{mname}.{x.id}" if isinstance(x, ast.Name) else None) for x in node.bases) if b]
                    defs[cq] = c
                    for m in node.body:
                        if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            defs[f"{cq}.{m.name}"] = _Def(f"{cq}.{m.name}", "method", m, mod, cq)
    for d in defs.values():
        if d.kind == "class":
            continue
        _Walker(d, d.module, tuple(roots)).run()
        d.npu = d.module.mentions_npu and _npu_mark(d.node)
        if d.npu:
            defaults = {c[1:].partition("@")[0] for _w, _ln, c in d.own if c and c.startswith("!")}
            gated = _npu_gate(d.node, defaults) if defaults else None
            if gated:  # NPU-aware only when the caller passes the device: its CUDA default is work otherwise
                d.npu = False
                d.npu_when = sorted(gated)
                d.own = [o for o in d.own if o[2] and o[2].startswith("!") and o[2][1:].partition("@")[0] in gated]
    # re-exports: public names users import -> defining qualname
    aliases: Dict[str, str] = {}
    for mname, mod in mods.items():
        for pub, q in mod.exports.items():
            if not pub.startswith("_"):
                aliases[f"{mname}.{pub}"] = q

    def canon(q: str) -> str:
        seen = set()
        while q not in defs and q in aliases and q not in seen:
            seen.add(q)
            q = aliases[q]
        return q

    def method(cls: str, name: str, depth: int = 0) -> Optional[str]:
        c = defs.get(canon(cls))
        if c is None or depth > 10:
            return None
        q = f"{c.qual}.{name}"
        if q in defs:
            return q
        for b in c.bases:
            got = method(b, name, depth + 1)
            if got:
                return got
        return None

    # resolve each def's calls to (def qual, condition)
    edges: Dict[str, List[Tuple[str, Optional[str]]]] = {}
    for q, d in defs.items():
        if d.kind == "class":
            init = method(q, "__init__")
            edges[q] = [(init, None, None)] if init else []
            continue
        out = []
        for target, cond, passed in d.calls:
            t = None
            if target.startswith("self.") and d.cls:
                t = method(d.cls, target[5:])
            elif target.startswith("super.") and d.cls:
                for b in defs[d.cls].bases:
                    t = method(b, target[6:])
                    if t:
                        break
            else:
                c = canon(target)
                if c in defs:
                    t = c
                else:  # Class.method / module.func through an alias
                    head, _, last = target.rpartition(".")
                    if head and canon(head) in defs:
                        t = method(head, last)
            if t and t != q:
                out.append((t, cond, passed))
        edges[q] = out
    # fixpoint: total work (what, path, line, condition)
    total: Dict[str, List[tuple]] = {}
    for q, d in defs.items():
        total[q] = [] if d.npu else [(w, d.module.path, ln, c or "") for w, ln, c in d.own if c != STATE][:MAX_WORK]
    for q, d in defs.items():  # a class's own defaults are its __init__'s
        if d.kind == "class" and edges[q]:
            init = defs[edges[q][0][0]]
            if not init.npu:
                total[q] = [(w, init.module.path, ln, c or "") for w, ln, c in init.own if c and c.startswith("!")][:MAX_WORK]
    for _ in range(MAX_DEPTH):
        changed = False
        for q, tg in edges.items():
            d = defs[q]
            if d.npu or len(total[q]) >= MAX_WORK:
                continue
            for t, cond, passed in tg:
                for w in total.get(t, ()):
                    if w[3] == STATE:
                        continue  # depends on the library's state: not known at any caller
                    if w[3].startswith("!"):
                        if passed is None or _passes(passed, w[3]):
                            continue  # the call inside the library passes the parameter
                    elif w[3]:
                        if passed is None:
                            item = w  # a class's own __init__: the caller's call decides
                            if not any(x[:3] == item[:3] for x in total[q]):
                                total[q].append(item)
                                changed = True
                            continue
                        if not flag_runs(w[3], passed[0], passed[2]):
                            continue  # the library's own call leaves the flag off
                    item = (w[0], w[1], w[2], cond or "")
                    if not any(x[:3] == item[:3] for x in total[q]):
                        total[q].append(item)
                        changed = True
                        if len(total[q]) >= MAX_WORK:
                            break
                if len(total[q]) >= MAX_WORK:
                    break
        if not changed:
            break
    # npu-aware marking: would have work through its own body or calls, but names the NPU
    entries: Dict[str, dict] = {}
    for q, d in sorted(defs.items()):
        if not (_public(q) if d.kind != "method" else _public(q.rsplit(".", 1)[1])):
            continue  # a method of a private class is kept: public subclasses inherit it
        if d.kind == "class":
            work = total[q]
            npu = bool(edges[q]) and defs[edges[q][0][0]].npu
        else:
            work = total[q]
            npu = d.npu and bool(d.own or any(total.get(e[0]) for e in edges[q]))
        work = [w for w in work if w[3] != STATE]
        if not work and not npu:
            continue
        e = {"kind": d.kind, "file": d.module.path, "line": d.node.lineno}
        if npu:
            e["npu_aware"] = True
        else:
            e["work"] = [list(w) for w in work]
            if d.kind != "class" and d.npu_when:
                e["npu_when"] = d.npu_when  # passing "npu" for one of these takes its NPU path
        entries[q] = e
    bases = {}
    for q, d in sorted(defs.items()):
        if d.kind == "class" and d.bases:
            bases[q] = [canon(b) for b in d.bases if canon(b) in defs]
            if not bases[q]:
                del bases[q]
    public_aliases = {}
    owners = {k.rsplit(".", 1)[0] for k, e in entries.items() if e["kind"] == "method"} | set(bases)
    for a in sorted(aliases):
        c = canon(a)
        if c != a and (c in entries or c in owners) and _public(a):
            public_aliases[a] = c
    return {"entries": entries, "aliases": public_aliases, "bases": bases}
