"""Module summaries and the facts of the project they make together.

Each file's analysis ends with a :func:`summarize` of what other modules can
use — module-level constants (backend strings, device values), the CUDA/NCCL
work each function and class does (its own error/silent findings of the rules
whose data says ``work``, and the project functions it calls), and the uses it
makes of imported names (calls, backend and device sinks).  The summary is a
small JSON-able dict, cached with the file's findings.

:class:`Project` joins the summaries once per scan (cheap: no parsing): Python's
import resolution over the scanned modules, the call graph across them, the
work and the weakest fix each function reaches through it, and each use
resolved to the definition it reaches.  What is reported from that is decided
by the project checks in ``rules/`` (:func:`ascendify.rules.registry.project_check`).

The per-file cache stays valid: the project is rebuilt from the cached
summaries on every scan, so it always reflects the summaries it used.
"""

from __future__ import annotations

import ast
import os
import posixpath
import sys
from typing import Optional

from ascendify.diagnostics import severity_rank
from ascendify.semantic.bindings import dotted
from ascendify.semantic.extensions import built_modules, extension_objects
from ascendify.semantic.imports import Resolver, name_lookup, norm, path_entry
from ascendify.semantic.instances import method_ref
from ascendify.semantic.noqa import noqa_map, suppresses
from ascendify.semantic.torch_api import PROCESS_GROUP_CALLS

_WORK_SEVERITIES = ("error", "silent")
_NOT_PROJECT = frozenset({"torch", "torch_npu", "numpy", "os", "sys", "math", "re", "json", "time", "logging",
                          "collections", "functools", "itertools", "typing", "dataclasses", "argparse", "pathlib",
                          "random", "copy", "warnings", "subprocess", "shutil", "transformers", "accelerate",
                          "diffusers", "timm", "torchvision", "deepspeed", "lightning", "pytorch_lightning", "tqdm",
                          "PIL", "cv2", "scipy", "pandas", "yaml", "wandb", "tensorboard", "onnx", "onnxruntime",
                          "apex", "einops", "huggingface_hub", "safetensors", "datasets", "sklearn", "matplotlib"})
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"abc", "ast", "glob", "io", "pickle", "socket", "string",
                                                             "tempfile", "threading", "traceback", "types", "uuid", "contextlib"}
MAX_RELATED = 5
"""Work items a function's summary keeps (the worst first): as many as a finding shows."""
MAX_MORE_SITES = 20
"""Calls of an imported name after the first one (in source order) in a file that a use records: the
project checks report each call site (DEV026, EXT017), up to 1 + this many per name and file."""


class _Roles:
    """What the rule data says a finding is to a module summary: ``work`` (code → True, or
    ``"param-default"``: only at a parameter's default), ``builds`` (codes whose finding marks CUDA
    code the project builds) and ``kernel_imports`` (codes of a CUDA kernel library's import, the
    stand-in for a kernel object whose build has no finding).  Read from the rules' ``work`` and
    ``builds_cuda`` fields (the model reads rule metadata; it imports nothing from rules/)."""

    __slots__ = ("work", "builds", "kernel_imports")

    def __init__(self, rules: dict):
        self.work = {c: getattr(r, "work", False) for c, r in rules.items() if getattr(r, "work", False)}
        self.builds = frozenset(c for c, r in rules.items() if getattr(r, "builds_cuda", False))
        self.kernel_imports = frozenset(c for c, r in rules.items() if getattr(r, "builds_cuda", False) == "import")


_roles_cache: dict = {}


def _roles(rules: dict) -> _Roles:
    got = _roles_cache.get(id(rules))
    if got is None or got[0] is not rules:
        got = _roles_cache[id(rules)] = (rules, _Roles(rules))
    return got[1]


# ---------------------------------------------------------------------- per file
def _span(ctx, node: ast.AST) -> list:
    """[line, col, end_line, end_col] of ``node`` in characters (the Edit convention)."""
    (line, col), (end_line, end_col) = ctx.span(node)
    return [line, col, end_line, end_col]


def _imports(ctx) -> dict:
    """local name → [module, name or "", level] for every import that can name a project module (any
    scope; the last one wins): relative imports, and absolute ones outside torch, the standard library
    and the well-known libraries."""
    out: dict = {}
    for node in ctx.import_nodes:
        if isinstance(node, ast.ImportFrom):
            if not node.level and (node.module or "").split(".")[0] in _NOT_PROJECT:
                continue
            for a in node.names:
                if a.name != "*":
                    out[a.asname or a.name] = [node.module or "", a.name, node.level or 0]
        elif isinstance(node, ast.Import):
            for a in node.names:
                root = a.name.split(".")[0]
                if root in _NOT_PROJECT or root in _STDLIB:
                    continue
                if a.asname:
                    out[a.asname] = [a.name, "", 0]
                else:  # `import utils` / `import pkg.mod`: binds the top-level name (`utils.f()`, `pkg.mod.f()`)
                    out[root] = [root, "", 0]
    return out


def _root_local(node: ast.AST) -> Optional[tuple]:
    """(root local name, dotted rest) of a Name/Attribute chain: ``ud.setup`` → ("ud", "setup")."""
    text = dotted(node)
    if text is None:
        return None
    root, _, rest = text.partition(".")
    return root, rest


def _top_imports(tree: ast.Module) -> dict:
    """Local name -> line of each import statement of the module body itself (not under ``try``/``if``):
    what the module cannot be imported without."""
    out: dict = {}
    for st in tree.body:
        if isinstance(st, ast.Import):
            for a in st.names:
                out.setdefault(a.asname or a.name.split(".")[0], st.lineno)
        elif isinstance(st, ast.ImportFrom):
            for a in st.names:
                out.setdefault(a.asname or a.name, st.lineno)
    return out


def summarize(ctx, findings: list) -> dict:
    """The summary of one analysed file (``ctx`` is its RuleContext after the walk)."""
    tree = ctx.tree
    imports = _imports(ctx)
    every_call = getattr(ctx, "all_calls", None)
    if every_call is None:
        every_call = [n for n in ast.walk(tree) if n.__class__ is ast.Call]
    # functions and classes with their line ranges (module level and methods of module-level classes)
    defs: list = []
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.append((st.name, st, None))
        elif isinstance(st, ast.ClassDef):
            defs.append((st.name, st, "class"))
            for m in st.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    defs.append((f"{st.name}.{m.name}", m, st.name))
    work: dict = {}
    def_nodes = {name: node for name, node, kind in defs if kind != "class"}
    def_nodes.update({name: def_nodes[name + ".__init__"] for name, _n, kind in defs if kind == "class" and name + ".__init__" in def_nodes})
    spans = [(min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())]), node.end_lineno or node.lineno, name)
             for name, node, _kind in defs]  # with its decorators (@triton.jit: EXT006 is reported there)
    roles = _roles(ctx.rules)
    ext_items = _extension_items(ctx, findings, every_call, roles)
    for f in findings:
        if f.severity not in _WORK_SEVERITIES:
            continue
        is_work = roles.work.get(f.code, False)
        if is_work is not True and not (is_work == "param-default" and _is_param_default(ctx.finding_nodes.get(id(f)))):
            continue  # a helper's `device="cuda"` default that moves tensors is work its callers get
        if _is_option_default(ctx.finding_nodes.get(id(f))):
            continue  # an argparse default is a value the function returns, not work it does
        node = ctx.finding_nodes.get(id(f))
        for start, end, name in spans:
            if start <= f.line <= end:
                fix = "" if f.fix is None else "safe" if f.fix.safe else "unsafe"
                item = [f.code, f.line, f.col, f.severity, f.message[:160], fix]
                param = _param_of(node, def_nodes.get(name))
                if param is not None:  # a default of this function's own parameter: a call that passes it does no such work
                    item.append(param)
                work.setdefault(name, []).append(item)
    methods = {cname: [(m.lineno, m.end_lineno or m.lineno) for m in cnode.body
                       if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name != "__init__"]
               for cname, cnode, kind in defs if kind == "class"} if ext_items else {}
    for call, item in ext_items:  # a call into the project's own CUDA code (fused.op(x) after fused = load(...))
        for start, end, name in spans:
            if not start <= call.lineno <= end or item in work.get(name, ()):
                continue
            if any(a <= call.lineno <= b for a, b in methods.get(name, ())):
                continue  # in a method of that class: the method's work, not what instantiating it runs
            work.setdefault(name, []).append(item)
    for cname, cnode, kind in defs:  # a class's own work: its body and __init__, not its other methods
        if kind == "class" and cname in work:
            other = [(m.lineno, m.end_lineno or m.lineno) for m in cnode.body
                     if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name != "__init__"]
            work[cname] = [w for w in work[cname] if not any(a <= w[1] <= b for a, b in other)]
    fix_of: dict = {}  # name -> the weakest fix among all its work (the list below keeps MAX_RELATED of it)
    for name, items in work.items():  # the worst first, then in file order
        items.sort(key=lambda w: (-severity_rank(w[3]), w[1], w[2]))
        fix_of[name] = _weakest(w[5] for w in items)
        del items[MAX_RELATED:]
    functions: dict = {}
    classes: dict = {}
    local_names = {name for name, _n, kind in defs if kind is None}
    local_classes = {name for name, _n, kind in defs if kind == "class"}

    def class_ref(fn: ast.AST) -> Optional[str]:
        """The reference of the project class (or function) a constructor's callee names."""
        r = _root_local(fn)
        if r is None:
            return None
        if r[0] in imports:
            return _ref(*imports[r[0]], r[1])
        if r[0] in local_classes and not r[1]:
            return "." + "\0" + r[0]
        return None

    inst_refs: dict = {}  # id(call) -> Class.method reference, for calls on instances of known classes
    ctor_targets: set = set()  # names (and self attributes) assigned a project class's instance somewhere in the file
    for n in every_call:
        p = getattr(n, "_asc_parent", None)
        if p.__class__ is ast.Assign or p.__class__ is ast.AnnAssign:
            head = n.func
            while head.__class__ is ast.Attribute:
                head = head.value
            if head.__class__ is ast.Name and (head.id in imports or head.id in local_classes):
                for t in (p.targets if p.__class__ is ast.Assign else [p.target]):
                    if t.__class__ is ast.Name:
                        ctor_targets.add(t.id)
                    elif t.__class__ is ast.Attribute and t.value.__class__ is ast.Name and t.value.id == "self":
                        ctor_targets.add("self")
    # calls of other project functions (imported names, or this module's functions), by enclosing def
    def_names = {id(node): name for name, node, kind in defs if kind != "class"}
    calls_by_def: dict = {}
    passes_by_def: dict = {}  # def -> ref -> the parameters every call of ref there passes a non-CUDA value for
    roots: list = []  # (call, (root, rest)) for calls rooted at an imported or module-level name
    for n in every_call:
        func = n.func.value if n.func.__class__ is ast.Subscript else n.func  # kernel[grid](...): a Triton launch
        f = func
        while f.__class__ is ast.Attribute:
            f = f.value
        if f.__class__ is not ast.Name:
            continue
        if f.id not in imports and f.id not in local_names and f.id not in local_classes:
            if f.id not in ctor_targets and not (f.id == "self" and func.__class__ is ast.Attribute and local_classes):
                continue
            ref = _instance_call(ctx, n, class_ref)  # loss_scaler(loss, opt), self.logger.sync(), self.helper()
            if ref is None:
                continue
            inst_refs[id(n)] = ref
        else:
            r = _root_local(func)
            if r is None:
                continue
            roots.append((n, r))
            root, rest = r
            if root in imports:
                mod, nm, lvl = imports[root]
                ref = _ref(mod, nm, lvl, rest)
            elif not rest:
                ref = "." + "\0" + root  # same module
            elif root in local_classes and "." not in rest:
                ref = "." + "\0" + f"{root}.{rest}"  # Fn.apply(x) (an autograd Function), Cls.static_method()
            else:
                continue
        p = getattr(n, "_asc_parent", None)
        while p is not None:
            owner = def_names.get(id(p))
            if owner is not None:
                calls_by_def.setdefault(owner, set()).add(ref)
                got = _passes(n)  # what every call of ref in this def passes (the intersection)
                edge = passes_by_def.setdefault(owner, {})
                edge[ref] = got if ref not in edge else edge[ref] & got
                break
            p = getattr(p, "_asc_parent", None)
    for name, node, kind in defs:
        entry = {"line": node.lineno, "col": node.col_offset, "work": work.get(name, [])[:MAX_RELATED], "calls": [],
                 "fix": fix_of.get(name, "safe")}
        if kind == "class":
            bases = [b for b in (class_ref(x) for x in node.bases) if b is not None]
            if bases:  # instantiating it runs the bases' __init__; its methods may be theirs
                entry["bases"] = bases
                entry["calls"] = list(bases)
            classes[name] = entry
            continue
        entry["calls"] = sorted(calls_by_def.get(name, ()))
        passes = {ref: sorted(v) for ref, v in passes_by_def.get(name, {}).items() if v}
        if passes:
            entry["passes"] = passes
        functions[name] = entry
    # instantiating a class runs its __init__ (and what that calls): that is the class's work
    for name, entry in classes.items():
        init = functions.get(name + ".__init__")
        if init is not None:
            entry["work"] = (entry["work"] + [w for w in init["work"] if w not in entry["work"]])[:MAX_RELATED]
            entry["fix"] = _weakest((entry["fix"], init["fix"]))
            entry["calls"] = sorted(set(entry["calls"]) | set(init["calls"]))
            if init.get("passes"):
                entry["passes"] = init["passes"]
        elif entry.get("bases"):
            entry["calls"] = sorted(entry["calls"])
    constants: dict = {}
    for st in tree.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            v = st.value
            name = st.targets[0].id
            if isinstance(v, ast.Constant) and isinstance(v.value, str) and len(v.value) < 64:
                constants[name] = {"str": v.value, "span": _span(ctx, v)}
            elif isinstance(v, ast.Constant) and isinstance(v.value, int) and not isinstance(v.value, bool):
                constants[name] = {"int": v.value, "span": _span(ctx, v)}
    # only what another module can reach matters: functions and classes with work or project calls
    functions = {k: v for k, v in functions.items() if v["work"] or v["calls"]}
    classes = {k: v for k, v in classes.items() if v["work"] or v["calls"]}
    uses = _uses(ctx, imports, every_call, roots, inst_refs)
    noqa = _noqa_entries(ctx.lines) if "noqa" in ctx.text.lower() else []
    reexports = _library_reexports(ctx)
    out: dict = {}
    if functions or classes or constants or uses or reexports:
        out = {"imports": imports, "functions": functions, "classes": classes, "constants": constants,
               "uses": uses, "noqa": noqa}
        if reexports:
            out["reexports"] = reexports
        top = _top_imports(tree)
        if top:
            out["top_imports"] = top
        if uses:
            t = _module_torch(tree)
            if t is not None:
                out["torch"] = t  # the module-level name of torch: an agnostic fix here can define DEVICE_TYPE
    elif imports:  # a package's __init__ re-exporting its modules' helpers (from .train_utils import setup)
        out = {"imports": imports}
        top = _top_imports(tree)
        if top:
            out["top_imports"] = top  # what importing the package runs (a submodule building CUDA code)
    path = _path_entries(ctx, every_call)
    if path:
        out["path"] = path
    builds = _builds(ctx, findings, every_call, roles)
    if builds:
        out["builds"] = builds
    at_import = _import_time_build(ctx, findings, roles)
    if at_import is not None:
        out["import_build"] = at_import
    # every module has a summary, even an empty one: the project pass resolves imports as Python does,
    # and a module that exists shadows same-named ones further along sys.path (another example's utils.py)
    return out or {"module": 1}


def _instance_call(ctx, call: ast.Call, class_ref) -> Optional[str]:
    """``Class.__call__`` / ``Class.method`` for a call on an instance of a class the file's bindings
    know (``scaler = NativeScaler()`` … ``scaler(loss, opt)``), or ``self.method()`` in a method."""
    f = call.func
    if f.__class__ is ast.Attribute and f.value.__class__ is ast.Name and f.value.id == "self":
        cls = ctx.bindings.self_class_of(f.value)
        if cls is not None and any(isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == f.attr for m in cls.body):
            return "." + "\0" + f"{cls.name}.{f.attr}"
    return method_ref(call, ctx.bindings, class_ref)


def _ext_item(ctx, findings: list, node: ast.AST, roles: _Roles) -> Optional[list]:
    for f in findings:
        if f.code in roles.builds and ctx.finding_nodes.get(id(f)) is node:
            return [f.code, f.line, f.col, f.severity, f.message[:160], ""]  # no fix: a kernel to port
    return None


def _extension_items(ctx, findings: list, every_call: list, roles: _Roles) -> list:
    """(call, work item) for each call into a module-level name bound to CUDA code the project builds
    (``fused = load(..., sources=[... .cu])`` … ``fused.fused_bias_act(x)``; a cupy kernel), outside a
    guard that picks a fallback on an Ascend host (``if x.is_cuda: fused.op(x) else: ref(x)``)."""
    objs = extension_objects(ctx.tree, ctx.bindings)
    if not objs:
        return []
    items: dict = {}
    for name, build in objs.items():
        item = _ext_item(ctx, findings, build, roles)
        if item is None:  # a cupy kernel: the file's cupy import finding says what it is
            item = next(([f.code, f.line, f.col, f.severity, f.message[:160], ""] for f in findings if f.code in roles.kernel_imports), None)
        if item is not None and item[3] in _WORK_SEVERITIES:
            items[name] = item
    out = []
    for n in every_call:
        f = n.func
        while f.__class__ is ast.Attribute:
            f = f.value
        if f.__class__ is ast.Name and f.id in items and any(b.scope is ctx.bindings.module_scope for b in ctx.bindings.resolve(f)):
            c = ctx.model.context(n)
            if not (c.dead or c.intent or c.npu_aware or c.other):
                out.append((n, items[f.id]))
    return out


def _import_time_build(ctx, findings: list, roles: _Roles) -> Optional[list]:
    """The work item of a CUDA build the module runs when it is imported (``fused = load(..., sources=
    [... .cu])`` in the module body, not in a function, class, ``if`` or ``try``), or None."""
    for f in findings:
        if f.code not in roles.builds or f.severity not in _WORK_SEVERITIES:
            continue
        node = ctx.finding_nodes.get(id(f))
        func = getattr(node, "func", None)
        name = getattr(func, "attr", None) or getattr(func, "id", None)
        if name not in ("load", "load_inline"):
            continue  # a cpp_extension JIT build (a Triton kernel or a setup.py's CUDAExtension runs no build at import)
        p = getattr(node, "_asc_parent", None)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
                                                    ast.If, ast.Try, ast.With, ast.For, ast.While, ast.Module)):
            p = getattr(p, "_asc_parent", None)
        if isinstance(p, ast.Module):
            return [f.code, f.line, f.col, f.severity, f.message[:160], ""]
    return None


def _builds(ctx, findings: list, every_call: list, roles: _Roles) -> dict:
    """dotted module name → the work item (its build finding) of each ``CUDAExtension(...)`` the file builds."""
    out: dict = {}
    for name, call in built_modules(every_call, ctx.bindings).items():
        item = _ext_item(ctx, findings, call, roles)
        if item is not None:
            out[name] = item
    return out


def _path_entries(ctx, every_call: list) -> list:
    """``[[where, folder, line], ...]``: the file's literal ``sys.path.insert/append`` calls."""
    out = []
    for n in every_call:
        f = n.func
        if f.__class__ is ast.Attribute and f.attr in ("insert", "append") and f.value.__class__ is ast.Attribute and f.value.attr == "path":
            e = path_entry(n, ctx.path, name_lookup(ctx.bindings, n.lineno))
            if e is not None:
                out.append([e[0], e[1], n.lineno])
    return out


def _module_torch(tree: ast.Module) -> Optional[str]:
    """The name ``import torch`` binds at module level (also in a top-level ``if``/``try``), or None."""
    todo = list(tree.body)
    while todo:
        st = todo.pop(0)
        if isinstance(st, ast.Import):
            for a in st.names:
                if a.name == "torch":
                    return a.asname or "torch"
        elif isinstance(st, (ast.If, ast.Try)):
            todo.extend(st.body + st.orelse + getattr(st, "finalbody", []))
    return None


# the agnostic prelude as rules/checks/agnostic.py writes it (the same text: the fixer adds it once)
_DEVICE_TYPE = ('DEVICE_TYPE = {t}.accelerator.current_accelerator().type if {t}.accelerator.is_available() '
                'and {t}.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"')


def _library_reexports(ctx) -> dict:
    """local name → what EXT017 needs to report a call of it in another module, for the names this file
    imports from a summarised library whose summary has CUDA work for them (yolov5's utils/torch_utils.py:
    ``from ultralytics.utils.torch_utils import autocast as smart_amp_autocast``, called from train.py)."""
    froms = [n for n in ctx.import_nodes if isinstance(n, ast.ImportFrom) and not n.level and n.module]
    if not froms:
        return {}
    from ascendify import libsum

    known = libsum.module_packages()
    libs, lines = [], {}
    for node in froms:
        if node.module.split(".")[0] in known:
            for a in node.names:
                if a.name != "*":
                    libs.append((a.asname or a.name, (node.module, a.name, 0)))
                    lines[a.asname or a.name] = node.lineno
    if not libs:
        return {}
    path = getattr(getattr(ctx, "src", None), "path", None)
    pins = libsum.project_pins(os.path.abspath(path)) if path else {}
    out: dict = {}
    for local, (mod, name, _lvl) in libs:
        s = libsum.for_module(mod.split(".")[0], pins)
        got = s.entry(f"{mod}.{name}") if s is not None else None
        if got is None:
            continue
        defq, entry = got
        if entry.get("npu_aware") or not entry.get("work"):
            continue
        advice, source = s.advice[entry["advice"]] if isinstance(entry.get("advice"), int) else ("", "unverified")
        out[local] = {"defined": defq, "lib": f"{s.package} {s.version}", "how": s.how, "advice": advice,
                      "source": source, "work": entry["work"], "line": lines.get(local, 0),
                      "npu_when": entry.get("npu_when", [])}
    return out


def _noqa_entries(lines: list) -> list:
    """``[[line, [codes] or None], ...]``: the ``# noqa`` comments of a file (None: a bare ``# noqa``)."""
    return [[line, sorted(codes) if codes is not None else None] for line, codes in noqa_map(lines).items()]


def _imported_modules(index: _Index, rel: str, imp: list) -> list:
    mod, name, level = imp
    dots = "." * level
    parts = mod.split(".") if mod else []
    # importing a.b.c runs a's and a.b's __init__ first
    cands = [dots + ".".join(parts[:i]) for i in range(1, len(parts) + 1)] if parts else ([dots] if dots else [])
    if name:
        cands.append(f"{dots}{mod}.{name}" if mod else dots + name)
    out = []
    for c in cands:
        m = index.module(c, rel)
        if m is not None and m != rel and m not in out:
            out.append(m)
    return out


def _import_builds(index: _Index, summaries: dict) -> dict:
    """rel → (rel of the build, its work item) for each module whose import runs a CUDA build: its own
    module-level ``load(... .cu)``, or a module-level import of a module that does (a package's
    ``__init__`` importing its ``fused_act`` submodule)."""
    loads = {rel: (rel, s["import_build"]) for rel, s in summaries.items() if s.get("import_build")}
    for _ in range(8):  # import depth
        changed = False
        for rel, s in summaries.items():
            if rel in loads:
                continue
            imports = s.get("imports") or {}
            for local in (s.get("top_imports") or {}):
                imp = imports.get(local)
                got = next((loads[m] for m in _imported_modules(index, rel, imp) if m in loads), None) if imp else None
                if got is not None:
                    loads[rel] = got
                    changed = True
                    break
        if not changed:
            break
    return loads


def suppressed(summary: dict, line: int, code: str) -> bool:
    """A ``# noqa`` on ``line`` of the summarised file hides ``code`` (a bare one hides every code)."""
    for entry in summary.get("noqa", ()):
        if isinstance(entry, list) and entry[0] == line:
            return suppresses(entry[1], code)
    return False


def _param_of(node, fn) -> Optional[str]:
    """``"name@pos"`` when ``node`` is the default of a parameter of the function ``fn`` itself (not of
    a function nested in it): the parameter a call can pass instead, by keyword or at position ``pos``
    of the call's arguments (``self``/``cls`` of a method not counted; -1: keyword-only)."""
    args = getattr(node, "_asc_parent", None) if node is not None else None
    if not isinstance(args, ast.arguments) or fn is None or getattr(args, "_asc_parent", None) is not fn:
        return None
    positional = list(args.posonlyargs) + list(args.args)
    shift = 0
    if positional and positional[0].arg in ("self", "cls") and not any(dotted(d) == "staticmethod" for d in fn.decorator_list):
        shift = 1
    for i, d in enumerate(args.defaults):
        if d is node:
            k = len(positional) - len(args.defaults) + i
            return f"{positional[k].arg}@{k - shift}"
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        if d is node:
            return f"{a.arg}@-1"
    return None


def _is_cuda_value(node: ast.AST) -> bool:
    """A literal CUDA device: ``"cuda"``, ``"cuda:0"``, ``torch.device("cuda")``."""
    if node.__class__ is ast.Call and node.args and (dotted(node.func) or "").endswith("device"):
        node = node.args[0]
    return node.__class__ is ast.Constant and isinstance(node.value, str) and node.value.strip().lower().startswith("cuda")


def _passes(call: ast.Call) -> set:
    """The parameters a call certainly passes a value for that is not a literal CUDA device: keyword
    names, and ``@i`` for each positional argument before any ``*args``."""
    out = {k.arg for k in call.keywords if k.arg and not _is_cuda_value(k.value)}
    for i, a in enumerate(call.args):
        if a.__class__ is ast.Starred:
            break
        if not _is_cuda_value(a):
            out.add(f"@{i}")
    return out


def overridden(item: list, passes) -> bool:
    """Work ``item`` is a default of the helper's own parameter that a call passing ``passes`` (the
    summary's parameter names and ``@i`` positions) replaces with a value of its own: the call does no such work."""
    if len(item) < 7 or not passes:
        return False
    name, _, pos = item[6].rpartition("@")
    return name in passes or (pos != "-1" and f"@{pos}" in passes)


def _is_param_default(node) -> bool:
    return node is not None and isinstance(getattr(node, "_asc_parent", None), ast.arguments)


def _is_option_default(node) -> bool:
    p = getattr(node, "_asc_parent", None) if node is not None else None
    if isinstance(p, ast.keyword) and p.arg == "default":
        call = getattr(p, "_asc_parent", None)
        return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument"
    return False


def _ref(mod: str, name: str, level: int, rest: str) -> str:
    base = mod if not name else (f"{mod}.{name}" if mod else name)
    full = f"{base}.{rest}" if rest else base
    return ("." * level) + "\0" + full if level else full


_SINK_NAMES = frozenset({"init_process_group", "new_group", "to", "cuda"})


def _uses(ctx, imports: dict, every_call: list, roots: list, inst_refs: Optional[dict] = None) -> list:
    """Calls of imported names (and methods of instances of imported classes), and imported names
    reaching backend/device sinks."""
    out: list = []
    seen: dict = {}
    if not imports:
        return out
    rooted = {id(n): r for n, r in roots}
    for n in every_call:
        inst = (inst_refs or {}).get(id(n))
        if inst is not None and not inst.startswith("."):
            site = {"span": _span(ctx, n), "tok": _tok(ctx, n.func), "where": _where(ctx, n), "text": ctx.segment(n.func)[:80]}
            passes = _passes(n)
            if passes:
                site["passes"] = sorted(passes)
            if inst not in seen:
                seen[inst] = {"kind": "call", "ref": inst, "inst": 1, **site}
                out.append(seen[inst])
            else:
                seen[inst].setdefault("more", []).append(site)
            continue
        r = rooted.get(id(n))
        f = n.func
        name = f.attr if f.__class__ is ast.Attribute else f.id if f.__class__ is ast.Name else None
        if r is None and name not in _SINK_NAMES and not n.keywords:
            continue
        if r is not None and r[0] in imports:
            mod, nm, lvl = imports[r[0]]
            root_mod = (mod or nm).split(".")[0]
            if lvl or root_mod not in _NOT_PROJECT:
                ref = _ref(mod, nm, lvl, r[1])
                star = any(k.arg is None for k in n.keywords) or any(a.__class__ is ast.Starred for a in n.args)
                kws = {k.arg: (bool(k.value.value) if k.value.__class__ is ast.Constant else None) for k in n.keywords if k.arg}
                site = {"span": _span(ctx, n), "tok": _tok(ctx, n.func), "where": _where(ctx, n), "args": [len(n.args), kws, star],
                        "text": ctx.segment(n.func)[:80]}
                passes = _passes(n)
                if passes:
                    site["passes"] = sorted(passes)
                if ref not in seen:
                    seen[ref] = {"kind": "call", "ref": ref, **site}
                    out.append(seen[ref])
                else:
                    seen[ref].setdefault("more", []).append(site)  # every call of the name: each is a place that breaks
        pos = PROCESS_GROUP_CALLS.get(ctx.call_name(n) or "") if name in ("init_process_group", "new_group") else None
        if pos is not None:
            val = None
            for k in n.keywords:
                if k.arg == "backend":
                    val = k.value
            if val is None and len(n.args) > pos:
                val = n.args[pos]
            rr = _root_local(val) if val is not None else None
            if rr is not None and rr[0] in imports:
                mod, nm, lvl = imports[rr[0]]
                out.append({"kind": "backend", "ref": _ref(mod, nm, lvl, rr[1]), "span": _span(ctx, val), "tok": _tok(ctx, val),
                            "text": ctx.segment(val)[:80], "where": _where(ctx, val)})
        dev_args = []
        if isinstance(f, ast.Attribute) and f.attr in ("to", "cuda") and n.args:
            dev_args.append(n.args[0])
        dev_args += [k.value for k in n.keywords if k.arg == "device"]
        for a in dev_args:
            rr = _root_local(a)
            if rr is not None and rr[0] in imports and isinstance(a, (ast.Name, ast.Attribute)):
                mod, nm, lvl = imports[rr[0]]
                if lvl or (mod or nm).split(".")[0] not in _NOT_PROJECT:
                    out.append({"kind": "device", "ref": _ref(mod, nm, lvl, rr[1]), "span": _span(ctx, a), "tok": _tok(ctx, a),
                                "text": ctx.segment(a)[:80], "where": _where(ctx, a)})
    for use in out:  # the calls of one name in source order (the walk is not): the first is the use, the next ones its `more`
        more = use.pop("more", None)
        if more:
            sites = sorted([{k: use.pop(k) for k in _SITE_KEYS if k in use}] + more, key=lambda x: (x["tok"][0], x["tok"][1]))
            use.update(sites[0])
            for x in sites[1:]:
                if x.get("text") == use["text"]:
                    del x["text"]  # said once, in the use
            use["more"] = sites[1:MAX_MORE_SITES + 1]
    return out


_SITE_KEYS = ("span", "tok", "where", "args", "text", "passes")


def _where(ctx, node: ast.AST) -> str:
    """The branch context of a use: "dead" (under a CUDA-only test), "skip" (NPU-aware code, another
    accelerator's branch, CUDA-only by intent), or ""."""
    c = ctx.model.context(node)
    if c.npu_aware or c.other or c.intent:
        return "skip"
    if c.dead:
        return f"dead:{getattr(c.dead_origin, 'lineno', 0)}"
    return ""


def _tok(ctx, node: ast.AST) -> list:
    (line, col), _end = ctx.token_span(node)
    return [line, col]


# ---------------------------------------------------------------------- project pass
def module_names(rel: str) -> list:
    """Dotted names a file can be imported as: every suffix of its path (``pkg/utils/dist.py`` →
    ``pkg.utils.dist``, ``utils.dist``, ``dist``); ``__init__.py`` names its package."""
    p = rel.replace(os.sep, "/")
    if not p.endswith(".py"):
        return []
    parts = [x for x in p[:-3].split("/") if x not in ("", ".")]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if any(not x.isidentifier() for x in parts):
        parts = parts[max(i for i, x in enumerate(parts) if not x.isidentifier()) + 1:]
    return [".".join(parts[i:]) for i in range(len(parts))]


_MAX_CHAIN = 40
"""How many references one resolution may pass through (re-exports, then bases, then their re-exports):
each step is two Python frames, so this stays far below the recursion limit."""


class _Index:
    """The scanned modules and Python's import resolution over them (:mod:`ascendify.semantic.imports`):
    each importing file's own folder first, package roots, ``src/`` layouts, its ``sys.path`` changes;
    a module a ``CUDAExtension`` builds is a module of its own (no file, CUDA work)."""

    def __init__(self, summaries: dict):
        self.summaries = summaries
        self.builds: dict = {}  # virtual rel of a built extension module -> (rel of the build, work item, dotted name)
        for rel, s in summaries.items():
            for name, item in (s.get("builds") or {}).items():
                d = posixpath.dirname(norm(rel))
                vrel = (d + "/" if d else "") + name.replace(".", "/") + ".py"
                self.builds[vrel] = (rel, item, name)
        self.resolver = Resolver(list(summaries) + list(self.builds), {rel: s.get("path") for rel, s in summaries.items()})
        self._norm = {norm(rel): rel for rel in list(summaries) + list(self.builds)}
        self._targets: dict = {}
        self._heads: dict = {}
        self.why: dict = {}  # (ref, importer) -> how the import was resolved, in words
        self.via: dict = {}  # (ref, importer) -> the module that re-exports it (a package's __init__)

    def module(self, dotted: str, importer: str) -> Optional[str]:
        level = len(dotted) - len(dotted.lstrip("."))
        got = self.resolver.resolve(importer, dotted[level:], level)
        if got is None or not got.rel:
            return None
        return self._norm.get(got.rel)

    def _why(self, dotted: str, importer: str) -> str:
        level = len(dotted) - len(dotted.lstrip("."))
        got = self.resolver.resolve(importer, dotted[level:], level)
        return got.why if got is not None else ""

    def target(self, ref: str, importer: str) -> Optional[tuple]:
        """(rel, member) for a reference ``pkg.mod.func`` / ``..mod\\0func`` / ``pkg.mod.Class.method``
        made in ``importer``, after the target module's re-exports (``from .train_utils import setup``
        in a package's ``__init__``) and a class's bases (a method it inherits); memoised."""
        key = (ref, importer)
        try:
            return self._targets[key]
        except KeyError:
            pass
        self._targets[key] = None  # a cycle of re-exports resolves to nothing
        depth = getattr(self, "_chain", 0)
        if depth > _MAX_CHAIN:  # a chain of distinct re-exports and bases this long (torch's own tree): unresolved
            del self._targets[key]  # (not memoised: from a shorter start it may resolve), not Python's recursion limit
            return None
        self._chain = depth + 1
        try:
            got = self._target(ref, importer)
            if got is not None:
                first = got[0]
                got = self._follow(got[0], got[1], 0)
                if got is not None and got[0] != first:
                    self.via[key] = first
        finally:
            self._chain = depth
        self._targets[key] = got
        return got

    def _local_heads(self, rel: str) -> set:
        """The module-level function and class names of ``rel``'s summary (methods give their class)."""
        heads = self._heads.get(rel)
        if heads is None:
            s = self.summaries[rel]
            heads = self._heads[rel] = {k.split(".")[0] for k in (s.get("functions") or {})} | set(s.get("classes") or {})
        return heads

    def _follow(self, rel: str, member: str, depth: int) -> Optional[tuple]:
        s = self.summaries.get(rel)
        if s is None or depth > 4:
            return (rel, member) if rel in self.builds else None
        if member in (s.get("functions") or {}) or member in (s.get("classes") or {}):
            return rel, member
        head, _, tail = member.partition(".")
        if tail in ("__call__", "apply") and f"{head}.forward" in (s.get("functions") or {}):
            return rel, f"{head}.forward"  # a module instance called (nn.Module), an autograd Function's apply
        imp = (s.get("imports") or {}).get(head)
        if imp is not None:  # re-exported: `from .train_utils import setup` in utils/__init__.py
            t = self.target(_ref(imp[0], imp[1], imp[2], tail), rel)
            if t is not None:
                return t
        cls = (s.get("classes") or {}).get(head)
        if cls is not None and tail:  # a method the class inherits
            for b in cls.get("bases", ()):
                t = self.target(b, rel)
                if t is not None:
                    t = self._follow(t[0], f"{t[1]}.{tail}", depth + 1)
                    if t is not None:
                        return t
        return rel, member

    def _target(self, ref: str, importer: str) -> Optional[tuple]:
        if "\0" in ref:
            dots, full = ref.split("\0", 1)
            if dots == "." and importer in self.summaries:
                if "." not in full or full.split(".")[0] in self._local_heads(importer):
                    return importer, full  # same module (a function, a class, a method called on self)
            parts = full.split(".")
            for i in range(len(parts), -1, -1):
                mod = dots + ".".join(parts[:i]) if i else dots
                rel = self.module(mod, importer)
                if rel is not None and i < len(parts):
                    self.why[(ref, importer)] = self._why(mod, importer)
                    return rel, ".".join(parts[i:])
            return None
        parts = ref.split(".")
        for i in range(len(parts) - 1, 0, -1):
            mod = ".".join(parts[:i])
            rel = self.module(mod, importer)
            if rel is not None:
                self.why[(ref, importer)] = f"`{mod}` is {rel}: {self._why(mod, importer)}"
                return rel, ".".join(parts[i:])
        return None


def _member(summary: dict, member: str) -> Optional[dict]:
    return (summary.get("functions") or {}).get(member) or (summary.get("classes") or {}).get(member)


def _weakest(fixes) -> str:
    """The weakest of work items' fixes: "" (one has none), "unsafe", or "safe" (all safe; also for none)."""
    fixes = set(fixes)
    return "" if "" in fixes else "unsafe" if "unsafe" in fixes else "safe"


def _transitive_fix(index: _Index) -> dict:
    """(rel, member) → the weakest fix of all the work it does or reaches through project calls (a
    summary without "fix": ""): "safe" means `ascendify fix` fixes every piece, so a call site's DEV026 goes."""
    level: dict = {}
    edges: dict = {}
    for rel, s in index.summaries.items():
        for kind in ("functions", "classes"):
            for name, e in (s.get(kind) or {}).items():
                level[(rel, name)] = e.get("fix", "")
                edges[(rel, name)] = [t for t in (index.target(c, rel) for c in e.get("calls", ()))  # a built extension: no fix
                                      if t is not None and (t[0] in index.builds or t[0] in index.summaries and _member(index.summaries[t[0]], t[1]) is not None)]
    changed = True
    while changed:  # levels only go down (3 of them): a few rounds
        changed = False
        for k, tgts in edges.items():
            new = _weakest([level[k]] + [level.get(t, "") for t in tgts])
            if new != level[k]:
                level[k], changed = new, True
    return level


def _transitive_work(index: _Index) -> dict:
    """(rel, member) → list of (rel, work item) including work reached through project calls (a call
    into a module a ``CUDAExtension`` builds is that build's work)."""
    own: dict = {}
    edges: dict = {}
    for rel, s in index.summaries.items():
        for kind in ("functions", "classes"):
            for name, e in (s.get(kind) or {}).items():
                own[(rel, name)] = [(rel, w) for w in e["work"]]
                tgts = []
                if len(e["work"]) >= MAX_RELATED:
                    edges[(rel, name)] = tgts
                    continue  # already as much to show as a finding shows
                passes = e.get("passes") or {}
                for c in e.get("calls", ()):
                    t = index.target(c, rel)
                    if t is None:
                        continue
                    if t[0] in index.builds:
                        brel, item, _name = index.builds[t[0]]
                        if (brel, item) not in own[(rel, name)]:
                            own[(rel, name)].append((brel, item))
                    elif t[0] in index.summaries and _member(index.summaries[t[0]], t[1]) is not None:
                        tgts.append((t, passes.get(c)))
                edges[(rel, name)] = tgts
    total = {k: list(v) for k, v in own.items()}
    for _ in range(6):  # call depth
        changed = False
        for k, tgts in edges.items():
            for t, passes in tgts:
                # the callee's own parameter defaults that every call here replaces are not work this caller reaches
                extra = [w for w in total.get(t, ()) if w not in total[k] and not (passes and w in own.get(t, ()) and overridden(w[1], passes))]
                if extra and len(total[k]) < MAX_RELATED:
                    total[k] = (total[k] + extra)[:MAX_RELATED]
                    changed = True
        if not changed:
            break
    return total


def resolution(index: _Index, use: dict, rel: str, trel: str, member: str) -> dict:
    """The related location that says why a call reaches ``trel``: the definition it resolves to,
    and how Python's import system finds that module from ``rel``."""
    if trel in index.builds:
        brel, item, name = index.builds[trel]
        return {"path": brel, "line": item[1], "col": item[2], "kind": "import",
                "message": f"`{use['text']}` is in `{name}`, the CUDA extension built here (no NPU build)"}
    e = _member(index.summaries.get(trel) or {}, member) or {}
    how = index.why.get((use["ref"], rel)) or ""
    via = index.via.get((use["ref"], rel))
    if via:
        how += f"; {via} re-exports it"
    kind = "class" if member in (index.summaries.get(trel) or {}).get("classes", {}) else "method" if "." in member else "function"
    inst = " (the class of the instance it is called on, from its assignment)" if use.get("inst") else ""
    return {"path": trel, "line": e.get("line", 1), "col": e.get("col", 0),
            "kind": "import", "message": f"`{use['text']}` resolves to the {kind} `{member}` in {trel}{inst}" + (f"; {how}" if how else "")}


class Reach:
    """One use (a call, a backend or device value) of ``rel`` resolved to ``member`` of ``target``
    (a scanned module, or a module a ``CUDAExtension`` builds); ``reexport``: what ``target``
    says of a library name it imports and the call reaches (``target`` re-exports it)."""

    __slots__ = ("rel", "summary", "use", "target", "member", "target_summary", "reexport")

    def __init__(self, rel: str, summary: dict, use: dict, target: str, member: str, target_summary: dict, reexport: Optional[dict]):
        self.rel, self.summary, self.use = rel, summary, use
        self.target, self.member, self.target_summary, self.reexport = target, member, target_summary, reexport

    def sites(self) -> list:
        """Each call site of the use (the file's calls of that name, in source order; up to
        1 + ``MAX_MORE_SITES``) as a use of its own, those in NPU-aware code left out."""
        out = []
        for x in [self.use] + list(self.use.get("more", ())):
            if x is self.use:
                site = {k: v for k, v in x.items() if k != "more"}
            else:  # the use's kind, ref and text; the site's own place, branch and arguments
                site = {k: v for k, v in self.use.items() if k != "more" and (k == "text" or k not in _SITE_KEYS)}
                site.update(x)
            if site.get("where", "") != "skip":
                out.append(site)
        return out


class Project:
    """The facts the summaries of a scan make together (``summaries``: rel path → summary; empty
    ones are left out), for the project checks: the import resolution (:attr:`index`), each function's
    and class's work and weakest fix through the project calls (:attr:`work`, :attr:`fix_level`), the
    modules that call each definition (:attr:`callers`), and every use resolved (:attr:`reaches`, in
    file and use order; uses in NPU-aware code, and those reaching nothing scanned, left out).
    ``findings`` (the scan's) give the messages of the work items (:meth:`text_of`)."""

    def __init__(self, summaries: dict, findings: Optional[list] = None):
        self.summaries = {k: v for k, v in summaries.items() if v}
        self.findings = findings
        self._messages = {(f.path, f.line, f.col, f.code): f.message[:160] for f in findings or ()}
        index = self.index = _Index(self.summaries)
        self.work = _transitive_work(index)
        self.fix_level = _transitive_fix(index)
        callers: dict = {}
        for rel, s in self.summaries.items():
            for use in s.get("uses", ()):
                if use["kind"] == "call":
                    t = index.target(use["ref"], rel)
                    if t is not None:
                        callers.setdefault(t, set()).add(rel)
        self.callers = callers
        reaches: list = []
        for rel, s in self.summaries.items():
            for use in s.get("uses", ()):
                if use.get("where", "") == "skip" and all(x.get("where", "") == "skip" for x in use.get("more", ())):
                    continue
                t = index.target(use["ref"], rel)
                if t is None or (t[0] not in self.summaries and t[0] not in index.builds):
                    continue
                trel, member = t
                tsum = self.summaries.get(trel) or {}
                rx = None
                if use["kind"] == "call" and _member(tsum, member) is None and member in tsum.get("reexports", {}):
                    rx = tsum["reexports"][member]
                reaches.append(Reach(rel, s, use, trel, member, tsum, rx))
        self.reaches = reaches
        self.import_builds = _import_builds(index, self.summaries)

    def imported_modules(self, rel: str, imp: list) -> list:
        """The scanned modules an import entry (``[module, name, level]`` of ``rel``'s summary) runs."""
        return _imported_modules(self.index, rel, imp)

    def text_of(self, rel: str, item: list) -> str:
        """The message of work item ``item`` of ``rel`` (the summary's own copy, else the scan's finding)."""
        if len(item) > 4:  # the summary has the message (also of rules --select leaves out of the output)
            return item[4]
        return self._messages.get((rel, item[1], item[2], item[0]), item[0])

    def member(self, rel: str, member: str) -> Optional[dict]:
        """The summary entry of function or class ``member`` of ``rel``."""
        return _member(self.summaries.get(rel) or {}, member)

    def resolution(self, use: dict, rel: str, trel: str, member: str) -> dict:
        return resolution(self.index, use, rel, trel, member)

