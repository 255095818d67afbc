"""Fix policy from the model: what a finding's branch context does to it.

Applied to a file's findings after the walk (docs/fix-policy.md gives the reasons):

* NPU-aware code (an NPU branch, or the CUDA side of a chain that has one) and
  another accelerator's branch (xpu, mps, hpu, ...) are left alone: no finding;
* CUDA-only-by-intent code (TensorRT, onnxruntime's CUDA provider, xformers, ...)
  is reported with the Ascend alternative and never rewritten;
* an ``except AttributeError/ImportError`` fallback for older versions keeps its
  finding as info, without a fix;
* code under a CUDA-only guard is dead on an Ascend host: the guard is the
  finding.  Its body's findings become info; when the guard's own finding has a
  fix and every piece of CUDA work in the body has one too, all of them get one
  combined fix (the guard and its body change together); otherwise no fix is
  applied to the guard or the body (the guard is left alone, and says why);
* a ``"cuda"`` entry of a device-keyed dict gets an ``"npu"`` entry beside it
  (``--target npu``) instead of being rewritten;
* a test's decorators (skip conditions, parameters) are left as written;
* a ``"cuda"`` that picks an implementation (``impl='cuda'``, ``impl == 'cuda'``:
  :mod:`ascendify.semantic.selectors`) is no device: its finding is dropped, found
  once per file from the comparisons the engine's walk collected.

:func:`import_policy` then drops ``import torch_npu`` edits the target release
does not need.
"""

from __future__ import annotations

import ast
from typing import Optional

from ascendify.diagnostics import Edit, Finding, Fix
from ascendify.semantic.bindings import ancestors
from ascendify.semantic.branches import library
from ascendify.semantic.selectors import selector_use
from ascendify.semantic.torch_api import autoloaded

POLICIES = {
    "branch": "its findings follow their branch context: none in another accelerator's or NPU-aware code; an \"npu\" "
              "entry for a device-keyed table; left as written in a test's decorator, in code CUDA-only by intent and in "
              "fallbacks for older versions; info, fixed with their guard or not at all, under a CUDA-only guard",
    "library": "the finding names a CUDA-only library and its Ascend alternative itself (no intent or dead-code note), "
               "and under a CUDA-only guard it holds the guard's fix back whatever its severity",
    "keeps-import": "the `import torch_npu` its fix adds stays whatever the target release (the file names torch_npu)",
    "selector": "no finding where the \"cuda\" picks an implementation, not a device: an implementation selector's value "
                "(`impl='cuda'`, `assert impl in ['ref', 'cuda']`), its test (`impl == 'cuda'`) and a device test in one "
                "`and` with that test (the CUDA implementation's own guard)",
}
"""Policy name → what it does to a rule's findings.  Which rules a policy applies to is rule data: the
``policy`` list of a rule in ``rules/data/*.toml`` (or of its file), read through the rule registry and
handed in as the scan's ``rules`` — this module names no rule."""


def has_policy(rules: dict, code: str, name: str) -> bool:
    """Rule ``code`` (in ``rules``, code → Rule) has the fix policy ``name``."""
    r = rules.get(code)
    return r is not None and name in r.policy


def needs_policy(findings: list, rules: dict) -> bool:
    """Some finding has the branch or the selector policy (:func:`apply_policy` has work to do)."""
    return any(has_policy(rules, f.code, "branch") or has_policy(rules, f.code, "selector") for f in findings)


def drop_selectors(findings: list, ctx) -> list:
    """``findings`` without those of the selector policy at an implementation selector's ``"cuda"`` or test
    (:func:`ascendify.semantic.selectors.selector_use`).  The selectors are found once, after the walk, from
    the comparisons it collected, and only in a file that has such a finding."""
    rules, nodes = ctx.rules, ctx.finding_nodes
    marked = [f for f in findings if has_policy(rules, f.code, "selector") and id(f) in nodes]
    if not marked:
        return findings
    sel = ctx.model.impl_selectors()
    if not sel:
        return findings
    drop = {id(f) for f in marked if selector_use(nodes[id(f)], sel)}
    return [f for f in findings if id(f) not in drop] if drop else findings


def _within(node: ast.AST, outer: ast.AST) -> bool:
    n: Optional[ast.AST] = node
    while n is not None:
        if n is outer:
            return True
        n = getattr(n, "_asc_parent", None)
    return False


def _covers(node: ast.AST, origin: ast.AST) -> bool:
    """``node`` is ``origin``, inside it, or holds it (within one expression)."""
    return _within(node, origin) or _within(origin, node)


def _device_keyed(node: ast.AST) -> Optional[tuple]:
    """(dict, key, value) when ``node`` sits in the value of a ``"cuda"`` entry of a dict literal
    (``{"cuda": torch.cuda.empty_cache, "xpu": torch.xpu.empty_cache}``)."""
    child = node
    p = getattr(node, "_asc_parent", None)
    while p is not None and not isinstance(p, ast.stmt):
        if isinstance(p, ast.Dict):
            for k, v in zip(p.keys, p.values):
                if v is child and isinstance(k, ast.Constant) and k.value == "cuda":
                    return p, k, v
            return None
        child, p = p, getattr(p, "_asc_parent", None)
    return None


def _npu_entry_fix(ctx, table: tuple) -> Optional[Fix]:
    """Add ``"npu": <the value with torch.cuda → torch.npu>`` after the ``"cuda"`` entry."""
    d, k, v = table
    if any(isinstance(x, ast.Constant) and x.value == "npu" for x in d.keys):
        return None
    seg = ctx.segment(d)
    val = ctx.segment(v)
    new_val = val.replace(".cuda.", ".npu.").replace(".cuda(", ".npu(")
    if new_val == val or "cuda" in new_val:
        return None
    (dl, dc), _e = ctx.span(d)
    (_vl, _vc), (el, ec) = ctx.span(v)
    lines = seg.splitlines(keepends=True)
    i = el - dl
    if i >= len(lines):
        return None
    offset = sum(len(x) for x in lines[:i]) + (ec - dc if i == 0 else ec)
    key = '"npu"' if ctx.segment(k).startswith('"') else "'npu'"
    text = seg[:offset] + f", {key}: {new_val}" + seg[offset:]
    start, end = ctx.span(d)
    return Fix((Edit("replace", text, start, end),), True, 'add an "npu" entry to the device-keyed table')


TABLE_OPERATION = 'add "npu" to the table of device types'
"""The operation of a DEV024 fix that adds ``"npu"`` beside ``"cuda"`` in a device table."""


def _table_entry_for_npu(ctx, node: ast.AST) -> Optional[Fix]:
    """The table entry ``"cuda"`` / ``"cuda:1"`` → ``"npu"`` / ``"npu:1"`` (same quotes)."""
    seg = ctx.segment(node)
    if not isinstance(node, ast.Constant) or len(seg) < 6 or seg[0] not in "\"'" or seg[1:5] != "cuda":
        return None
    start, end = ctx.span(node)
    return Fix((Edit("replace", seg[0] + "npu" + seg[5:], start, end),), True, "the NPU entry under the NPU test")


def apply_policy(findings: list, ctx) -> list:
    """The findings of one file (``ctx``: its RuleContext after the walk) after the branch policy
    (see the module docstring)."""
    findings = drop_selectors(findings, ctx)
    nodes, model, rules = ctx.finding_nodes, ctx.model, ctx.rules
    out: list = []
    groups: dict = {}  # id(origin) -> (origin, [body findings])
    contexts: dict = {}
    holds_back: set = set()  # id() of body findings that keep their guard as written whatever their severity
    keys = _GroupKeys()
    for f in findings:
        node = nodes.get(id(f))
        if node is None or not has_policy(rules, f.code, "branch"):
            out.append(f)
            continue
        table = _device_keyed(node)
        if table is not None:  # the NPU never looks the "cuda" key up: add an "npu" entry, keep "cuda"
            if any(isinstance(x, ast.Constant) and x.value == "npu" for x in table[0].keys):
                continue
            # agnostic: no entry — `torch.npu` is evaluated when the dict is built, and it exists only with
            # torch_npu loaded (an import on a CUDA or CPU machine would fail)
            f.fix = _npu_entry_fix(ctx, table) if f.fix is not None and ctx.settings.target == "npu" else None
            f.note('a device-keyed table: add an "npu" entry (the "cuda" one stays)', "table")
            out.append(f)
            continue
        if _in_decorator(node):  # a test's skip condition or parameters: about the test machine, left as written
            f.fix = None
            if f.severity in ("error", "silent"):
                f.severity = "info"
            f.note("in a decorator (a test's skip condition or parameters): left as written", "decorator")
            out.append(f)
            continue
        c = model.context(node)
        if not c.intent:
            lib = _guarded_intent(node, model)
            if lib:
                c.intent, c.intent_lib = True, lib
        contexts[id(f)] = c
        if c.npu_aware or c.other:
            continue
        if c.intent:
            if c.dead and c.dead_origin is not None:  # CUDA-only-by-intent code under the guard: it holds the guard back
                groups.setdefault(keys.of(c.dead_origin, node), (c.dead_origin, []))[1].append(f)
            lib = library(c.intent_lib) or {}
            alt = lib.get("alternative", "")
            f.fix = None
            if f.severity in ("error", "silent"):
                f.severity = "warning"
            if not has_policy(rules, f.code, "library"):  # those name the library and its alternative themselves
                f.note(f"CUDA-only by intent ({c.intent_lib}): left as written" + (f"; {alt}" if alt else ""), "intent")
            out.append(f)
            continue
        if c.compat:
            f.fix = None
            f.severity = "info"
            f.note("a fallback for older versions (an `except` handler, or the other side of `hasattr(torch, ...)`): left as written", "compat")
            out.append(f)
            continue
        if c.dead and c.dead_origin is not None:
            if f.fix is not None and f.fix.operation == TABLE_OPERATION:
                # `["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]`: under the NPU test the table
                # gets the NPU entry instead of the CUDA one (its CUDA cases would run on an NPU host);
                # agnostic: left alone, and it holds its guard back (NPU cases would run on CUDA hosts)
                f.fix = _table_entry_for_npu(ctx, node) if ctx.settings.target == "npu" else None
                if f.fix is None:
                    holds_back.add(id(f))
            groups.setdefault(keys.of(c.dead_origin, node), (c.dead_origin, []))[1].append(f)
        out.append(f)
    if not groups:
        _hold_class_tests(out, nodes, ctx)
        return out
    origins: dict = {}  # group key -> every origin node with that key (the same test written twice)
    for f in out:
        c = contexts.get(id(f))
        if c is not None and c.dead and c.dead_origin is not None:
            origins.setdefault(keys.of(c.dead_origin, nodes[id(f)]), set()).add(c.dead_origin)
    for key, (origin, body) in groups.items():
        same = origins.get(key, {origin}) | {origin}
        guard = [f for f in out if id(f) in contexts and nodes.get(id(f)) is not None and f not in body
                 and (any(_covers(nodes[id(f)], o) for o in same) or keys.of(nodes[id(f)], nodes[id(f)]) == key)]
        line = getattr(origin, "lineno", 0)
        fixable_guard = [g for g in guard if g.fix is not None]
        # what must change with the guard: the body's CUDA code (errors and silent downgrades); its
        # warnings and notes (a missing is_initialized() guard, an operator note) keep their own fixes
        # a silent test of its own (`and args.dist_backend == "nccl"`, never true on Ascend) needs no change with
        # the guard: left as it is, its own branch stays off as it is now; it keeps its own fix (imagenet main.py:118)
        inner = {id(f) for f in body if _off_test(f, nodes.get(id(f)))}
        blocking = [f for f in body if id(f) not in inner and (f.severity in ("error", "silent") or has_policy(rules, f.code, "library") or id(f) in holds_back)]  # "library": a CUDA-only library
        bad = next((f for f in blocking if f.fix is None), None)
        if fixable_guard and bad is None:
            members = fixable_guard + [f for f in body if f.fix is not None and id(f) not in inner]
            edits: list = []
            for f in members:
                for e in f.fix.edits:
                    if e not in edits:
                        edits.append(e)
            safe = all(f.fix.safe for f in fixable_guard + blocking)
            for f in members:
                f.fix = Fix(tuple(edits), safe, f.fix.operation)
            for f in body:
                _dead(rules, f, ctx.line_ref(line), line, " (fixed together with that test)" if f.fix is not None and id(f) not in inner
                      else " (its own test: the guard's fix does not need it)" if id(f) in inner else "")
        else:
            for f in body:
                f.fix = None
                _dead(rules, f, ctx.line_ref(line), line, " — fix that test, or add an NPU branch" if guard else "")
            if bad is not None:
                for g in fixable_guard:
                    g.fix = None
                    g.note(f"left as written: its branch still has CUDA code with no automatic fix ({bad.code} at {ctx.line_ref(bad.line)})",
                           "held", bad.line)
    _hold_class_tests(out, nodes, ctx)
    return out


def _test_like(node: Optional[ast.AST]) -> bool:
    """A device test as a finding's node: ``d.type == "cuda"``, ``x.is_cuda``, ``torch.cuda.is_available()``."""
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.Attribute):
        return node.attr == "is_cuda"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("is_available", "startswith", "endswith")
    return False


def _class_of(node: Optional[ast.AST]) -> Optional[ast.ClassDef]:
    return next((a for a in ancestors(node) if isinstance(a, ast.ClassDef)), None) if node is not None else None


def _hold_class_tests(out: list, nodes: dict, ctx) -> None:
    """A class decides its device in one place and reads the decision in another: denoising-diffusion-
    pytorch's ``Attend.__init__`` returns early unless ``torch.cuda.is_available()`` (held back: CUDA
    device properties follow) and sets ``self.cuda_config`` only after it; ``flash_attn`` picks
    ``self.cuda_config if q.is_cuda else self.cpu_config``.  Rewriting ``q.is_cuda`` alone sends NPU
    tensors to the config that stayed None.  So while one CUDA test of a class is left as written, the
    class's other device tests are left with it (its device moves are still fixed)."""
    held: dict = {}  # id(class) -> line of a held test
    for f in out:
        if f.fix is None and any(n.kind == "held" for n in f.notes):
            cls = _class_of(nodes.get(id(f)))
            if cls is not None:
                held.setdefault(id(cls), f.line)
    if not held:
        return
    for f in out:
        node = nodes.get(id(f))
        if f.fix is None or not _test_like(node):
            continue
        cls = _class_of(node)
        line = held.get(id(cls)) if cls is not None else None
        if line is None:
            continue
        f.fix = None
        f.note(f"left as written with the CUDA test at {ctx.line_ref(line)}: the class decides its device there "
               f"and reads the decision here", "held", line)


TEST_DECORATORS = frozenset({"skipIf", "skipUnless", "skipif", "skip", "xfail", "parametrize", "param", "expectedFailure",
                             "requires_cuda", "require_torch_gpu", "require_torch_accelerator", "slow"})


def test_decorator(d: ast.AST) -> bool:
    """``@unittest.skipIf(...)``, ``@pytest.mark.parametrize(...)``, ``@pytest.mark.skipif(...)``: a test's
    conditions and data (not code such as ``@torch.amp.custom_fwd(device_type="cuda")``)."""
    f = d.func if isinstance(d, ast.Call) else d
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if name in TEST_DECORATORS:
        return True
    while isinstance(f, ast.Attribute):  # any @pytest.mark.X(...) (a project's own marks: runs_on(["cuda"]))
        if f.attr == "mark":
            return True
        f = f.value
    return False


class _GroupKeys:
    """Guards that test the same thing in one function change together or not at all
    (``if torch.cuda.is_available(): log_msg = ... {memory}`` and, later, the ``.format(memory=...)``
    under the same test, also nested in a loop): the function and the test as written — except that
    tests in mutually exclusive branches are separate guards (``elif args.distributed: if device.type ==
    'cuda': ...`` and a sibling ``elif device.type == 'cuda':``, the imagenet example)."""

    def __init__(self):
        self._classes: dict = {}  # (id(fn), text) -> [(branch sides, class number)]

    def of(self, origin: ast.AST, node: ast.AST) -> tuple:
        fn = node
        while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            fn = getattr(fn, "_asc_parent", None)
        try:
            text = ast.dump(origin)
        except Exception:  # noqa: BLE001
            text = str(id(origin))
        sides = _branch_sides(origin, fn)
        known = self._classes.setdefault((id(fn), text), [])
        for other, number in known:
            if not any(k in sides and sides[k] != side for k, side in other.items()):
                return (id(fn), text, number)
        known.append((sides, len(known)))
        return (id(fn), text, len(known) - 1)


def _branch_sides(origin: ast.AST, fn: Optional[ast.AST]) -> dict:
    """id(if) → "body" / "orelse" for each ``if`` inside ``fn`` whose branch holds ``origin``."""
    out: dict = {}
    child, p = origin, getattr(origin, "_asc_parent", None)
    while p is not None and p is not fn:
        if p.__class__ is ast.If:
            if any(x is child for x in p.body):
                out[id(p)] = "body"
            elif any(x is child for x in p.orelse):
                out[id(p)] = "orelse"
        child, p = p, getattr(p, "_asc_parent", None)
    return out


def _in_decorator(node: ast.AST) -> bool:
    child, p = node, getattr(node, "_asc_parent", None)
    while p is not None:
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return any(child is d and test_decorator(d) for d in p.decorator_list)
        if isinstance(p, ast.stmt):
            return False
        child, p = p, getattr(p, "_asc_parent", None)
    return False


def _guarded_intent(node: ast.AST, model) -> str:
    """The CUDA-only library an ``if`` exists for, when ``node`` is (in) that ``if``'s test:
    ``if x.device.type != "cuda": raise ValueError("xformers needs a CUDA device")``."""
    from ascendify.semantic.bindings import Guard

    child, p = node, getattr(node, "_asc_parent", None)
    while p is not None and not isinstance(p, ast.stmt):
        child, p = p, getattr(p, "_asc_parent", None)
    if not isinstance(p, ast.If) or p.test is not child:
        return ""
    for polarity in (True, False):
        g = Guard(p.test, polarity, "if", p)
        lib = model.branches._intent_of_branch(g) or model.branches._reaches_cuda_only(g)
        if lib:
            return lib
    return ""


def _off_test(f: Finding, node: Optional[ast.AST]) -> bool:
    """A silent finding that is (part of) an ``if``/``while``/conditional test that holds while it is true
    (``x == "nccl"``, ``a and b``, ``is_nccl_available()``; no ``not``, ``!=`` or ``not in``): on Ascend its
    branch is off, with or without the enclosing guard's fix."""
    if f.severity != "silent" or node is None:
        return False
    child, p = node, getattr(node, "_asc_parent", None)
    while p is not None:
        if isinstance(p, (ast.If, ast.While, ast.IfExp)):
            return p.test is child
        if isinstance(p, ast.Compare):
            if not all(isinstance(op, (ast.Eq, ast.In, ast.Is)) for op in p.ops):
                return False
        elif isinstance(p, ast.UnaryOp) or isinstance(p, ast.stmt):
            return False
        elif not isinstance(p, (ast.BoolOp, ast.Attribute, ast.Call, ast.Subscript, ast.Name, ast.Constant)):
            return False
        child, p = p, getattr(p, "_asc_parent", None)
    return False


def _dead(rules: dict, f: Finding, line: str, lineno: int, tail: str) -> None:
    if has_policy(rules, f.code, "library"):
        return  # a CUDA-only library's finding says itself what a guard around it means
    if f.severity != "info":
        f.severity = "info"
    f.note(f"dead code on an Ascend host: under the CUDA-only test at {line}{tail}", "dead", lineno or None)


_NPU_DETECTORS = ("is_torch_npu_available", "is_npu_available", "npu_is_available")


def handles_npu(ctx) -> bool:
    """The file already deals with the NPU: it imports torch_npu (in any block, also conditionally)
    or asks whether one is there (``is_torch_npu_available()``, ``hasattr(torch, "npu")``)."""
    if ctx.has_import("torch_npu"):
        return True
    text = ctx.text
    if any(d in text for d in _NPU_DETECTORS):
        return True
    return 'hasattr(torch, "npu")' in text or "hasattr(torch, 'npu')" in text


def import_policy(findings: list, ctx) -> None:
    """Drop ``import torch_npu`` edits that the target does not need.

    * torch_npu ≥ 2.5.1 is loaded by ``import torch`` (the ``torch.backends`` entry point,
      PyTorch "Autoloading Out-of-Tree Extension"; torch_npu README): a fix that only renames to
      ``torch.npu.*`` / ``.npu()`` / ``"npu"`` needs no import; one that writes a ``torch_npu.*``
      name still does (a module attribute needs its import);
    * a file that already handles the NPU (imports torch_npu, also conditionally, or tests for it)
      gets nothing added;
    * a file that imports nothing from torch gets no ``import torch_npu`` (its entry script loads it).
    """
    autoload = autoloaded(ctx.settings.torch_npu)
    has_torch = ctx.has_import("torch")
    aware = None
    for f in findings:
        fx = f.fix
        if fx is None or not any(e.kind == "add_import" and e.text.strip() == "import torch_npu" for e in fx.edits):
            continue
        if has_policy(ctx.rules, f.code, "keeps-import"):
            continue  # the file names torch_npu: the import is the fix
        if aware is None:
            aware = handles_npu(ctx)
        names_module = any("torch_npu." in e.text for e in fx.edits if e.kind != "add_import")
        drop = aware or (not names_module and (autoload or not has_torch))
        if drop:
            edits = tuple(e for e in fx.edits if not (e.kind == "add_import" and e.text.strip() == "import torch_npu"))
            f.fix = Fix(edits, fx.safe, fx.operation) if edits else None
