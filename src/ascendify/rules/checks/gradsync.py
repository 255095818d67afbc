"""Gradient synchronisation rules (DST010, DST011): multi-process training whose ranks never agree.

Both bugs run without an error and train on one card exactly as intended; on
eight cards every rank steps with its own gradients, so the replicas drift
apart (the field guide's "单卡跑完全正常" bug, ``seeds/000_f9969beca4f14e7c.txt``).
PyTorch's own contract: ``DistributedDataParallel`` "performs an all-reduce
step on gradients" and "Parameters are never broadcast between processes"
(torch ``nn/parallel/distributed.py``); ``no_sync()`` defers that all-reduce
to "the first forward-backward pass exiting the context".

Both checks are deliberately conservative (a false alarm here asks a user to
rewrite working training code): anything that may synchronise gradients —
a wrapper, a framework that wraps for the user, a collective over gradients
or parameters, a project helper whose name says it wraps or syncs, a model
passed through a function this file cannot see — silences them.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from typing import Iterable, Optional

from ascendify.rules.registry import check, file_check
from ascendify.semantic.bindings import ancestors, dotted, parent

_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)

# ------------------------------------------------------------------ vocabulary
_INIT = frozenset({
    "torch.distributed.init_process_group",
    "torch.distributed.distributed_c10d.init_process_group",
    "torch.distributed.device_mesh.init_device_mesh",
    "torch.distributed.init_device_mesh",
})
"""Calls that set up a process group in this process."""

_FRAMEWORKS = (
    "deepspeed", "accelerate", "lightning", "pytorch_lightning", "lightning_fabric", "horovod", "colossalai",
    "fairscale", "megatron", "apex.parallel", "mmengine", "mmcv.parallel", "ray.train", "torch_xla", "composer",
    "bagua", "torch.distributed.fsdp", "torch.distributed._composable", "torch.distributed.tensor",
    "torch.distributed.pipelining", "torch.distributed.pipeline", "torch.distributed.algorithms",
    "torch.distributed.optim", "torch.distributed.rpc", "torch.distributed._tensor",
)
"""Imports of libraries that wrap the model or synchronise gradients for the user
(or parallelise it in a way where a replica's gradients need no all-reduce)."""

_WRAPPERS = frozenset({
    "DistributedDataParallel", "FullyShardedDataParallel", "fully_shard", "ShardedDataParallel", "DDP", "FSDP",
    "DistributedOptimizer", "ZeroRedundancyOptimizer", "parallelize_module", "replicate", "prepare_model",
})
"""Names whose mere presence means some model is (or may be) wrapped for data parallelism."""
_WRAPPER_PARTS = ("DistributedDataParallel", "FullySharded", "DDP", "FSDP")
"""Substrings of identifiers that do the same (``NativeDDP``, ``smart_DDP``, ``MMDistributedDataParallel``)."""

_COLLECTIVES = frozenset({
    "all_reduce", "allreduce", "all_reduce_coalesced", "allreduce_coalesced", "all_reduce_multigpu",
    "reduce_scatter", "reduce_scatter_tensor", "_reduce_scatter_base", "reduce_scatter_coalesced",
    "all_gather", "all_gather_into_tensor", "allgather", "broadcast", "broadcast_coalesced", "gather",
    "send", "recv", "isend", "irecv", "grouped_allreduce", "allreduce_", "all_reduce_",
})
_PARTITIONING = frozenset({
    "new_group", "new_subgroups", "send", "recv", "isend", "irecv", "batch_isend_irecv", "P2POp",
    "register_comm_hook", "register_post_accumulate_grad_hook",
})
"""Calls that mean the ranks do not (all) hold replicas of one model — pipeline stages, sub-groups —
or that gradients are reduced from a hook: each rank stepping on its own may be right."""
_REDUCE_ONLY_TORCH = frozenset({"reduce"})  # ``functools.reduce`` too: only when it resolves to torch.distributed

_SYNC_VERBS = ("reduce", "sync", "average", "avg", "mean", "gather", "scatter", "allreduce")
_SYNC_OBJECTS = ("grad", "param", "weight")
_WRAP_HINTS = ("ddp", "fsdp", "distributed", "parallel", "shard", "wrap")
_MODEL_HINTS = ("model", "net", "module", "backbone", "encoder", "decoder", "generator", "discriminator")
_RANK_HINTS = ("rank", "gpu", "device_ids")

_MODULE_METHODS = frozenset({
    "to", "cuda", "npu", "cpu", "half", "float", "bfloat16", "double", "type", "train", "eval", "requires_grad_",
    "to_empty", "share_memory", "apply", "load_state_dict", "parameters", "named_parameters",
})
"""``nn.Module`` methods: calling one on a model returns the model (or its parameters), never a wrapper."""

_ZOO = ("torch.", "torchvision.", "timm.", "transformers.", "diffusers.", "open_clip.", "segmentation_models_pytorch.")
"""Model libraries whose constructors and factories return a plain ``nn.Module``."""


_OPT_CLASSES = frozenset({
    "SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "RMSprop", "Rprop", "LBFGS",
    "SparseAdam", "Adafactor", "Lion", "LAMB", "Lamb", "LARS", "Muon",
})


# ------------------------------------------------------------------ small helpers
class _Token:
    """A position-only node: the ``.attr`` token of an attribute (what a finding points at)."""

    def __init__(self, line: int, col: int, end_line: int, end_col: int):
        self.lineno, self.col_offset, self.end_lineno, self.end_col_offset = line, col, end_line, end_col


def _attr_token(node: ast.Attribute, ctx) -> _Token:
    """The ``.name`` token of ``node`` (from its dot to its end), in ``ast`` byte columns."""
    line = node.end_lineno or node.lineno
    end = node.end_col_offset if node.end_col_offset is not None else node.col_offset
    start = end - len(node.attr.encode("utf-8"))
    if 0 < line <= len(ctx.lines):
        raw = ctx.lines[line - 1].encode("utf-8")
        dot = raw.rfind(b".", 0, start + 1)
        if dot >= 0 and not raw[dot + 1 : start].strip():
            start = dot
    return _Token(line, max(start, 0), line, end)


def _last(name: Optional[str]) -> str:
    return (name or "").rsplit(".", 1)[-1]


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _root(node: ast.AST) -> Optional[ast.AST]:
    """The Name/Attribute chain an expression starts from (``model.to(dev)`` → ``model``)."""
    while True:
        if isinstance(node, ast.Call):
            node = node.func.value if isinstance(node.func, ast.Attribute) else node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call):
            node = node.value
        else:
            break
    return node if isinstance(node, (ast.Name, ast.Attribute)) else None


def _nodes_in(scope: ast.AST) -> Iterable[ast.AST]:
    """Nodes of ``scope``'s own body (not of functions or classes nested in it)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, _FUNC + (ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))


def _is_backward(n: ast.AST) -> bool:
    return isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"


def _is_optimizer(expr: ast.AST, ctx) -> bool:
    """``optimizer``, ``self.opt_g``, ``optim``, or a name assigned ``torch.optim.X(...)``."""
    text = (ctx.dotted(expr) or "").lower()
    last = text.rsplit(".", 1)[-1]
    if last and "sched" not in last and not last.startswith("option") and (last.startswith("opt") or "optim" in last):
        return True
    target = ctx.resolve(expr) if isinstance(expr, ast.Name) else None
    if isinstance(target, ast.Call):
        q = ctx.call_name(target) or ""
        if q.startswith("torch.optim.") and ".lr_scheduler." not in q:
            return True
        return _callee(target) in _OPT_CLASSES
    return False


def _is_scaler(expr: ast.AST, ctx) -> bool:
    text = (ctx.dotted(expr) or "").lower()
    if "scaler" in text.rsplit(".", 1)[-1]:
        return True
    target = ctx.resolve(expr) if isinstance(expr, ast.Name) else None
    return isinstance(target, ast.Call) and _callee(target) == "GradScaler"


def _optimizer_step(call: ast.Call, ctx) -> bool:
    """``optimizer.step()`` / ``optimizer.step(closure)`` / ``scaler.step(optimizer)``."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr == "step"):
        return False
    if _is_optimizer(f.value, ctx):
        return True
    return bool(call.args) and _is_scaler(f.value, ctx) and _is_optimizer(call.args[0], ctx)


_BUILTINS = frozenset(dir(builtins))


def _dotted(node: ast.AST) -> str:
    return dotted(node) or ""


def _model_like(expr: ast.AST, models: set) -> bool:
    """``expr`` starts from a trained model (``models``) or a name that says it is one (``net``, ``self.model``)."""
    r = _root(expr)
    if r is None:
        return False
    text = _dotted(r)
    if text in models:
        return True
    return any(h in part.lower() for part in text.split(".") for h in _MODEL_HINTS)


def _mentions(node: ast.AST, words: tuple, tensors: bool = True) -> bool:
    """Some Name or Attribute under ``node`` is named with one of ``words`` (or, with ``tensors``,
    is a ``.grad`` / ``.main_grad`` / ``.data`` attribute)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute):
            if (tensors and n.attr in ("grad", "main_grad", "data")) or any(w in n.attr.lower() for w in words):
                return True
        elif isinstance(n, ast.Name) and n.id != "no_grad" and any(w in n.id.lower() for w in words):
            return True
    return False


# ------------------------------------------------------------------ evidence
@dataclass
class _Defined:
    """Names of the functions and classes the file defines."""

    names: set


def _defined_names(ctx) -> set:
    """Names of the functions and classes this file defines (computed once per file)."""
    return ctx.state(_Defined, lambda c: _Defined({sc.node.name for sc in c.bindings.scopes.values() if sc.kind != "module"})).names


def _framework_import(ctx) -> bool:
    if any(m == f or m.startswith(f + ".") for m in ctx.imported_modules for f in _FRAMEWORKS):
        return True
    return any(_last(full) in _WRAPPERS or any(p in _last(full) for p in _WRAPPER_PARTS) for full in ctx.aliases.values())


def _collective_syncs(call: ast.Call, ctx) -> bool:
    """A collective over gradients or parameters (``dist.all_reduce(p.grad)``, over a flat grad buffer, ...)."""
    name = _callee(call)
    if name in _REDUCE_ONLY_TORCH:
        if not (ctx.call_name(call) or "").startswith("torch.distributed"):
            return False
    elif name not in _COLLECTIVES:
        return False
    args = list(call.args) + [k.value for k in call.keywords]
    if any(_mentions(a, ("grad", "param", "weight", "bucket", "buf", "flat")) for a in args):
        return True
    fn = ctx.enclosing_function(call)
    scope = fn if fn is not None else ctx.tree
    if fn is not None and any(w in fn.name.lower() for w in _SYNC_OBJECTS):
        return True
    for n in _nodes_in(scope):  # the function reads gradients somewhere: assume they are what is reduced
        if isinstance(n, ast.Attribute) and n.attr in ("grad", "main_grad"):
            return True
    for p in ancestors(call):  # for p in model.parameters(): dist.all_reduce(x)
        if isinstance(p, (ast.For, ast.AsyncFor)) and _mentions(p.iter, ("param", "grad")):
            return True
        if p is scope:
            break
    return False


def _hook_collective(call: ast.Call) -> bool:
    return any(isinstance(n, ast.Call) and _callee(n) in _COLLECTIVES for a in call.args for n in ast.walk(a)) \
        or any(isinstance(a, (ast.Name, ast.Attribute)) for a in call.args)  # a named hook: cannot see it, assume it syncs


def _sync_helper_name(name: str) -> bool:
    n = name.lower().replace("_", "")
    return any(o in n for o in _SYNC_OBJECTS) and any(v in n for v in _SYNC_VERBS)


def _assigned_back(node: ast.Assign) -> bool:
    """``model = f(model, ...)`` / ``model, opt = f(model, opt)``: some target is passed in again."""
    targets = []
    for t in node.targets:
        targets.extend(t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])
    names = {_dotted(t) for t in targets if isinstance(t, (ast.Name, ast.Attribute))} - {""}
    call = node.value
    if not isinstance(call, ast.Call):
        return False
    for a in list(call.args) + [k.value for k in call.keywords]:
        r = _root(a)
        if r is not None and _dotted(r) in names:
            return True
    return False


def _invisible(call: ast.Call, ctx, defined: set) -> bool:
    """A call of a function this file does not define and that is not torch's, a builtin, or a method of its argument."""
    f = call.func
    q = ctx.call_name(call) or ""
    if q.startswith(_ZOO + ("copy.", "functools.")):
        return False
    if isinstance(f, ast.Name):
        return f.id not in defined and f.id not in _BUILTINS
    if isinstance(f, ast.Attribute):
        if f.attr in _MODULE_METHODS or f.attr in defined:
            return False  # Classifier().cuda(rank), model.to(device)
        r = _root(f.value)
        if isinstance(r, ast.Name) and (r.id in defined or (ctx.qualname(r) or "").startswith("torch")):
            return False
        return True
    return True


def _model_names(ctx) -> set:
    """Dotted names of the things whose parameters are trained (``model`` in ``model.parameters()``)."""
    out = set()
    for n in ctx.all_calls:
        if isinstance(n.func, ast.Attribute) and n.func.attr in ("parameters", "named_parameters", "configure_optimizers"):
            text = _dotted(n.func.value)
            if text:
                out.add(text)
    return out


def _synchronised(ctx) -> bool:
    """True when anything in the file may wrap a model or synchronise its gradients."""
    if _framework_import(ctx):
        return True
    defined = _defined_names(ctx)
    models = _model_names(ctx)
    for n in ast.walk(ctx.tree):
        if isinstance(n, ast.Name):
            if n.id in _WRAPPERS or any(p in n.id for p in _WRAPPER_PARTS):
                return True
        elif isinstance(n, ast.Attribute):
            if n.attr in _WRAPPERS or any(p in n.attr for p in _WRAPPER_PARTS):
                return True
            if n.attr == "module" and _model_like(n.value, models):
                return True  # model.module: the model is a wrapper somewhere
            if n.attr in ("require_backward_grad_sync", "sync_gradients"):
                return True
        elif isinstance(n, _FUNC):
            if _sync_helper_name(n.name):
                return True
        elif isinstance(n, ast.Call):
            name = _callee(n)
            low = name.lower()
            if _sync_helper_name(name) or _collective_syncs(n, ctx) or name in _PARTITIONING:
                return True
            if name == "register_hook" and _hook_collective(n):
                return True  # p.register_hook(lambda g: dist.all_reduce(g))
            q = ctx.call_name(n) or ""
            if any(h in low for h in _WRAP_HINTS) and not q.startswith("torch."):
                args = list(n.args) + [k.value for k in n.keywords]
                if ("ddp" in low or "fsdp" in low) and args:
                    return True
                if any(_model_like(a, models) for a in args):
                    return True  # create_ddp_model(model), wrap_distributed(net)
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and _invisible(n.value, ctx, defined):
            if _assigned_back(n):
                return True  # model = helper_elsewhere(model, ...): it may wrap it
            targets = [t for t in n.targets if isinstance(t, (ast.Name, ast.Attribute))]
            if any(_model_like(t, models) for t in targets):
                vals = list(n.value.args) + [k.value for k in n.value.keywords]
                if any(_mentions(v, _RANK_HINTS, tensors=False) for v in vals):
                    return True  # model = get_model(args.arch, local_rank): a factory that may wrap
    return False


# ------------------------------------------------------------------ DST010
@dataclass
class _Dst010:
    """What the walk saw for DST010: process-group inits and optimizer steps."""

    inits: list = field(default_factory=list)
    steps: list = field(default_factory=list)


@check("DST010", ast.Call, names=("init_process_group", "init_device_mesh", "step"))
def gradsync_collect(node: ast.Call, ctx) -> None:
    if _callee(node) == "step":
        if _optimizer_step(node, ctx):
            ctx.state(_Dst010).steps.append(node)
    elif ctx.call_name(node) in _INIT and not _single_process(node):
        ctx.state(_Dst010).inits.append(node)


def _single_process(init: ast.Call) -> bool:
    """``init_process_group(..., world_size=1)``: a one-rank group some library needs."""
    ws = next((k.value for k in init.keywords if k.arg == "world_size"), None)
    return isinstance(ws, ast.Constant) and ws.value == 1


def _in_test(node: ast.AST) -> bool:
    """Inside a test function or test class: tests often feed every rank the same data on purpose."""
    for p in ancestors(node):
        if isinstance(p, _FUNC) and p.name.startswith("test"):
            return True
        if isinstance(p, ast.ClassDef) and (p.name.startswith("Test") or any(
                _dotted(b).endswith("TestCase") for b in p.bases)):
            return True
    return False


def _training_step(call: ast.Call, ctx, loop_called: set) -> bool:
    """The step runs after a backward in the same function, in a loop (or in a function called in one)."""
    fn = ctx.enclosing_function(call)
    scope = fn if fn is not None else ctx.tree
    if not any(_is_backward(n) for n in _nodes_in(scope)):
        return False
    if ctx.in_loop(call):
        return True
    return fn is not None and fn.name in loop_called


def _loop_called(ctx) -> set:
    return {_callee(n) for n in ctx.all_calls if ctx.in_loop(n)}


def _origins(expr: ast.AST, ctx, depth: int = 0) -> Optional[list]:
    """The expressions ``expr`` (a Name or ``self.x``) is assigned in this file, followed through
    plain name-to-name assignments; None when some of its values cannot be seen (a parameter no call
    in this file passes, an unpacking, a for target).

    A function parameter is followed to the arguments of the function's call sites in this file,
    ``self.x = x`` in ``__init__`` to the class's constructor calls (a few levels at most).
    """
    if depth > 3:
        return None
    vals = _direct_origins(expr, ctx, depth)
    if vals is None:
        return None
    out: list = []
    me = _dotted(expr)
    for v in vals:
        if isinstance(v, (ast.Name, ast.Attribute)) and _dotted(v) and (
                isinstance(v, ast.Name) or (isinstance(v.value, ast.Name) and v.value.id == "self")):
            if _dotted(v) == me and ctx.scope_of(v) is ctx.scope_of(expr):
                continue  # model = model: nothing new
            sub = _origins(v, ctx, depth + 1)
            if sub is None:
                return None
            out.extend(sub)
        else:
            out.append(v)
    return out


def _direct_origins(expr: ast.AST, ctx, depth: int) -> Optional[list]:
    if isinstance(expr, ast.Name):
        vals = ctx.assigned_values(expr)
        fn = ctx.enclosing_function(expr)
        if fn is not None and expr.id in _param_names(fn) and ctx.scope_of(expr) is fn:
            if len(vals) != 1:
                return None  # a parameter that is also reassigned: too clever for this check
            return _argument_origins(fn, expr.id, ctx, depth)
        if any(v is None for v in vals):
            vals = _unpacked_values(expr, ctx)
        if not vals or any(v is None for v in vals):
            return None
        return list(vals)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        cls = ctx.enclosing_class(expr)
        if cls is None:
            return None
        vals = []
        for n in ast.walk(cls):
            if isinstance(n, (ast.Assign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" \
                            and t.attr == expr.attr:
                        if n.value is None:
                            return None
                        vals.append(n.value)
                    elif isinstance(t, (ast.Tuple, ast.List)) and any(
                            isinstance(e, ast.Attribute) and _dotted(e) == f"self.{expr.attr}" for e in t.elts):
                        return None
        return vals or None
    return None


def _unpacked_values(name: ast.Name, ctx) -> list:
    """Values of ``name`` in its scope where ``gen, critic = Generator(), Critic()`` counts element by
    element; None entries for anything else that binds it (a parameter, a for target, ``a, b = f()``)."""
    scope = ctx.scope_of(name)
    if (id(scope), name.id) not in ctx.assignments:  # as FileContext.assigned_values: else the module's
        scope = ctx.tree
    out: list = []
    for n in _nodes_in(scope):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name) and t.id == name.id:
                    out.append(n.value)
                elif isinstance(t, (ast.Tuple, ast.List)) and any(isinstance(e, ast.Name) and e.id == name.id for e in t.elts):
                    v = n.value
                    if isinstance(v, (ast.Tuple, ast.List)) and len(v.elts) == len(t.elts) and not any(
                            isinstance(e, ast.Starred) for e in t.elts + v.elts):
                        out.extend(val for e, val in zip(t.elts, v.elts) if isinstance(e, ast.Name) and e.id == name.id)
                    else:
                        out.append(None)
        elif isinstance(n, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.withitem, ast.NamedExpr)):
            target = n.optional_vars if isinstance(n, ast.withitem) else n.target
            if target is not None and any(isinstance(e, ast.Name) and e.id == name.id for e in ast.walk(target)):
                out.append(n.value if isinstance(n, ast.AnnAssign) else None)
    if isinstance(scope, _FUNC) and name.id in _param_names(scope):
        out.append(None)
    return out


def _param_names(fn: ast.AST) -> list:
    a = fn.args  # type: ignore[attr-defined]
    return [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]


def _argument_origins(fn: ast.AST, name: str, ctx, depth: int) -> Optional[list]:
    a = fn.args  # type: ignore[attr-defined]
    positional = [x.arg for x in a.posonlyargs + a.args]
    method = isinstance(parent(fn), ast.ClassDef)
    if method and positional and positional[0] in ("self", "cls"):
        positional = positional[1:]
    called = fn.name  # type: ignore[attr-defined]
    by_self = method and called != "__init__"  # self.run_epoch(model, ...)
    if method and called == "__init__":
        called = parent(fn).name  # type: ignore[union-attr]  # Trainer(model, optimizer)
    out: list = []
    for call in ctx.model.calls_of(called):  # f(...), self.f(...), obj.f(...): the walk's Calls, indexed by name
        f = call.func
        if by_self:
            if not (isinstance(f, ast.Attribute) and f.attr == called and isinstance(f.value, ast.Name)
                    and f.value.id == "self"):
                continue
        elif not (isinstance(f, ast.Name) and f.id == called):
            continue  # train(loader, model, ...), not model.train()
        if any(isinstance(x, ast.Starred) for x in call.args) or any(k.arg is None for k in call.keywords):
            return None
        val = next((k.value for k in call.keywords if k.arg == name), None)
        if val is None and name in positional and positional.index(name) < len(call.args):
            val = call.args[positional.index(name)]
        if val is None:
            return None
        out.append(val)  # _origins follows it further
    return out or None


def _trained_models(optimizer: ast.AST, ctx) -> Optional[list]:
    """The model expressions whose parameters ``optimizer`` holds, or None when they cannot be seen."""
    values = _origins(optimizer, ctx)
    if not values:
        return None
    models: list = []
    for v in values:
        if not isinstance(v, ast.Call):
            return None
        found = _parameter_owners(v, ctx)
        if not found:  # create_optimizer_v2(model, "sgd", lr=0.1), build_optimizer(cfg, model)
            found = [a for a in list(v.args) + [k.value for k in v.keywords]
                     if isinstance(a, (ast.Name, ast.Attribute)) and _model_like(a, set())]
        if not found:
            return None
        models.extend(found)
    return models


def _parameter_owners(value: ast.AST, ctx, depth: int = 0) -> list:
    """Receivers of ``.parameters()`` / ``.named_parameters()`` / ``.configure_optimizers()`` in ``value``
    (through names assigned a parameter list, e.g. ``params = [...]``)."""
    out = []
    for n in ast.walk(value):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in (
                "parameters", "named_parameters", "configure_optimizers"):
            r = _root(n.func.value) if not isinstance(n.func.value, (ast.Name, ast.Attribute)) else n.func.value
            if r is not None:
                out.append(r)
        elif isinstance(n, ast.Name) and depth < 2 and n is not value:
            for v in _origins(n, ctx) or ():
                if v is not value:
                    out.extend(_parameter_owners(v, ctx, depth + 1))
    return out


def _model_visible(model: ast.AST, ctx) -> bool:
    """Every value the model gets in this file is a visible construction (:func:`_constructed`), not a
    parameter passed in from elsewhere.  ``model.backbone`` counts as ``model``."""
    while isinstance(model, ast.Attribute) and not (isinstance(model.value, ast.Name) and model.value.id == "self"):
        model = model.value
    return _visible(model, ctx, 0)


def _visible(model: ast.AST, ctx, depth: int) -> bool:
    values = _origins(model, ctx)
    if not values or depth > 3:
        return False
    me = _dotted(model)
    for v in values:
        inner = v
        while isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in _MODULE_METHODS:
            inner = inner.func.value  # model.to(device).train()
        if inner is not v and isinstance(inner, (ast.Name, ast.Attribute)):
            if _dotted(inner) == me:
                continue  # model = model.to(device): the same model
            if not _visible(inner, ctx, depth + 1):
                return False
        elif not _constructed(v, ctx):
            return False
    return True


def _constructed(value: ast.AST, ctx) -> bool:
    """``value`` builds a plain model: a class (``GPT(cfg)``, ``nn.Linear(4, 4).cuda()``), a function of this
    file, a model-zoo factory (``timm.create_model``, ``X.from_pretrained``, ``models.__dict__[arch]()``).
    A snake_case function this file does not define (``load_model()``, ``get_model(args)``) may return a
    wrapped model: not constructed."""
    call = value
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _MODULE_METHODS \
            and isinstance(call.func.value, ast.Call):
        call = call.func.value  # Net().cuda(rank).train() -> Net()
    if not isinstance(call, ast.Call):
        return False
    f = call.func
    if isinstance(f, ast.Subscript):
        return True  # models.__dict__[args.arch](pretrained=True)
    q = ctx.call_name(call) or ""
    if q.startswith(_ZOO):
        return True
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if not name:
        return False
    if name == "from_pretrained" or name[0].isupper():
        return True
    return name in _defined_names(ctx)


def _step_optimizer(call: ast.Call, ctx) -> ast.AST:
    """The optimizer of ``optimizer.step()`` / ``scaler.step(optimizer)`` (see :func:`_optimizer_step`)."""
    f = call.func
    if isinstance(f, ast.Attribute) and _is_optimizer(f.value, ctx):
        return f.value
    return call.args[0]


@file_check("DST010")
def gradsync_report(ctx) -> None:
    st = ctx.peek_state(_Dst010)
    if st is None or not st.inits or not st.steps or _synchronised(ctx):
        return
    inits, steps = st.inits, st.steps
    loop_called = _loop_called(ctx)
    first = min(inits, key=lambda n: (n.lineno, n.col_offset))
    for call in steps:
        if not _training_step(call, ctx, loop_called) or _in_test(call):
            continue
        models = _trained_models(_step_optimizer(call, ctx), ctx)
        if not models or not all(_model_visible(m, ctx) for m in models):
            continue  # the model comes from code this file does not show: it may be wrapped there
        ctx.report(_attr_token(call.func, ctx), None, name=ctx.segment(call.func), init=_last(ctx.call_name(first)),
                   line=first.lineno)


# ------------------------------------------------------------------ DST011
@dataclass
class _Dst011:
    """``with model.no_sync():`` items the walk saw: (call, with statement)."""

    withs: list = field(default_factory=list)


@check("DST011", ast.Call, names=("no_sync",))
def no_sync_collect(node: ast.Call, ctx) -> None:
    if not isinstance(node.func, ast.Attribute):
        return
    item = parent(node)
    if isinstance(item, ast.withitem) and item.context_expr is node:
        ctx.state(_Dst011).withs.append((node, parent(item)))


def _inside(node: ast.AST, stmt: ast.AST) -> bool:
    return any(p is stmt for p in ancestors(node))


@file_check("DST011")
def no_sync_report(ctx) -> None:
    st = ctx.peek_state(_Dst011)
    if st is None or not st.withs:
        return
    withs = st.withs
    if any(isinstance(n, ast.Attribute) and n.attr == "require_backward_grad_sync" for n in ast.walk(ctx.tree)):
        return  # the sync flag is toggled by hand (nanoGPT)
    if any(_sync_helper_name(_callee(n)) or _collective_syncs(n, ctx) for n in ctx.all_calls):
        return  # gradients reduced by hand after the accumulation
    by_scope: dict = {}
    for call, stmt in withs:
        fn = ctx.enclosing_function(stmt)
        by_scope.setdefault(id(fn) if fn is not None else 0, (fn, []))[1].append((call, stmt))
    for fn, items in by_scope.values():
        scope = fn if fn is not None else ctx.tree
        body = list(_nodes_in(scope))
        steps = [n for n in body if isinstance(n, ast.Call) and _optimizer_step(n, ctx)]
        if not steps:
            continue
        stmts = [s for _, s in items]
        backwards = [n for n in body if _is_backward(n)]
        if not backwards or any(not any(_inside(b, s) for s in stmts) for b in backwards):
            continue  # some backward runs outside no_sync(): that one synchronises
        for call, stmt in items:
            if not any(_inside(b, stmt) for b in backwards):
                continue
            if _conditional(stmt, scope) or not _in_loop_or_has_loop(stmt, scope):
                continue
            ctx.report(_attr_token(call.func, ctx), None, name=ctx.segment(call.func))


def _conditional(stmt: ast.AST, scope: ast.AST) -> bool:
    """``stmt`` sits under an ``if``/``try`` handler/``match`` inside ``scope``."""
    for p in ancestors(stmt):
        if p is scope:
            return False
        if isinstance(p, (ast.If, ast.IfExp, ast.ExceptHandler)) or type(p).__name__ in ("match_case", "Match"):
            return True
    return False


def _in_loop_or_has_loop(stmt: ast.AST, scope: ast.AST) -> bool:
    """The ``with`` repeats (it is in a loop) or a loop runs inside it (the micro-batches)."""
    for p in ancestors(stmt):
        if p is scope:
            break
        if isinstance(p, _LOOPS):
            return True
    return any(isinstance(n, _LOOPS) for n in ast.walk(stmt))
