"""One training step on fake tensors: peak bytes, the split at the peak, modules, timeline.

:func:`measure` builds nothing real: the model and its inputs are ``FakeTensor`` s (PyTorch's
``torch._subclasses.fake_tensor.FakeTensorMode``: shapes, dtypes and strides, no data, no
memory), the step is forward + loss + backward + ``optimizer.step()`` + ``zero_grad()`` in
steady state (the optimizer states exist before the step, as from the second iteration on),
and :class:`ascendify.fit.recorder.StepRecorder` writes down every storage allocation and free.

Sizes are bytes of tensor storage (``UntypedStorage.nbytes()``): what the framework asks the
allocator for, before any block rounding (``ascendify.fit.allocator`` models that).
"""

from __future__ import annotations

import contextlib
import fnmatch
import re
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

from ascendify.errors import AscendifyError
from ascendify.fit.recorder import CATEGORIES, StepRecorder, StepTrace

OPTIMIZERS = ("sgd", "adam", "adamw", "adagrad", "rmsprop", "adamax", "nadam", "radam", "adadelta", "none")
"""``--optimizer`` names: the ``torch.optim`` class of that name with its defaults (``sgd`` with
momentum 0.9, so it keeps one momentum buffer per parameter); ``none``: no optimizer step."""

AMP_DTYPES = {"fp16": "float16", "bf16": "bfloat16"}


@dataclass
class StepOptions:
    """How the step is run.

    ``optimizer``: one of :data:`OPTIMIZERS`.  ``amp``: ``None``, ``"fp16"`` or ``"bf16"`` —
    forward and loss under ``torch.autocast`` (weights stay fp32, as torch.amp keeps them;
    fp16 also scales the loss as ``GradScaler`` does).  ``checkpointing``: a module-name pattern
    (fnmatch on the qualified name, ``*`` matches one or more name parts:
    ``blocks.*``, ``layer?.*``), ``"auto"`` (each block of the class with the most activation
    memory), or ``None``.  ``foreach``: optimizer foreach kernels (torch picks them by
    default on cuda/xpu/privateuse1 devices, so on the NPU; not on the CPU).
    """

    optimizer: str = "adam"
    amp: Optional[str] = None
    checkpointing: Optional[str] = None
    foreach: bool = True
    device_type: str = "cpu"


@dataclass
class Measurement:
    """Result of one fake step (all sizes in bytes).

    ``peak_bytes``: the most bytes live at once; ``peak_index``: the event where it happens;
    ``peak_phase``; ``split``: bytes per category (:data:`CATEGORIES`) live at the peak;
    ``totals``: parameters / gradients / optimizer_states / inputs bytes, and
    ``saved_activations`` — bytes saved for backward, live at the end of the forward pass;
    ``modules``: fqn -> bytes the module's own ops saved for backward; ``module_types``;
    ``events``: the ordered ``("alloc", sid, nbytes)`` / ``("free", sid)`` sequence (what
    ``ascendify.fit.allocator.reserved_for`` replays; a resize is a free and an alloc);
    ``timeline``: live bytes after each event; ``phase_starts``: phase -> event index;
    ``checkpointed``: the modules that were wrapped; ``seconds``, ``ops``.
    """

    peak_bytes: int
    peak_index: int
    peak_phase: str
    split: Dict[str, int]
    totals: Dict[str, int]
    modules: Dict[str, int]
    module_types: Dict[str, str]
    events: List[tuple]
    timeline: List[int]
    category_timeline: Dict[str, List[int]]
    phase_starts: Dict[str, int]
    checkpointed: List[str] = field(default_factory=list)
    seconds: float = 0.0
    ops: int = 0
    batch: Optional[int] = None
    inputs: List[str] = field(default_factory=list)


# ----------------------------------------------------------------------------- model building
def fake_mode():
    from torch._subclasses.fake_tensor import FakeTensorMode
    return FakeTensorMode(allow_non_fake_inputs=False)


def build_fake_model(target, mode) -> "tuple[object, str]":
    """Build the model of ``target`` (``pkg.module:factory`` or a callable) with every tensor fake;
    returns ``(model, how)``.

    ``how`` is ``"fake"`` when the factory ran under ``mode`` (a FakeTensorMode; its parameters
    take no memory); ``"meta"`` when it could not (it reads values while building) and was built
    on the meta device, then moved into ``mode`` with ``to_empty``; ``"cpu"`` when that failed too
    and it was built for real on the CPU (host memory for the parameters, for the time of the
    build), then converted with ``mode.from_tensor``.  Raises :class:`AscendifyError` (one line)
    when the factory cannot be imported, fails all three ways, or does not return an ``nn.Module``.
    """
    import torch
    from ascendify.export.loader import seeded_call
    from ascendify.probe.model import load_factory
    factory = load_factory(target) if isinstance(target, str) else target
    name = target if isinstance(target, str) else getattr(target, "__name__", "factory")
    first = None
    how = "fake"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with mode:
                model = seeded_call(factory)
        except BaseException as exc:  # noqa: BLE001 - the user's factory
            if isinstance(exc, KeyboardInterrupt):
                raise
            first = exc
            model = None
        if model is None:
            try:
                with torch.device("meta"):
                    model = seeded_call(factory)
                if isinstance(model, torch.nn.Module):
                    with mode:
                        model = model.to_empty(device="cpu")
                how = "meta"
            except BaseException as exc:  # noqa: BLE001
                if isinstance(exc, KeyboardInterrupt):
                    raise
                model = None
        if model is None:
            try:
                model = seeded_call(factory)
                if isinstance(model, torch.nn.Module):
                    model = model._apply(lambda t: t if isinstance(t, torch._subclasses.fake_tensor.FakeTensor)
                                         else mode.from_tensor(t))
                how = "cpu"
            except BaseException:  # noqa: BLE001
                raise AscendifyError(f"{name}() failed while building the model: "
                                     f"{type(first).__name__}: {str(first).splitlines()[0] if str(first) else ''}") from None
    if not isinstance(model, torch.nn.Module):
        raise AscendifyError(f"{name}() returned {type(model).__name__}, not an nn.Module (fit needs parameters to train)")
    return model, how


def make_optimizer(name: str, params, foreach: bool):
    import torch
    if name == "none":
        return None
    classes = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW", "adagrad": "Adagrad", "rmsprop": "RMSprop",
               "adamax": "Adamax", "nadam": "NAdam", "radam": "RAdam", "adadelta": "Adadelta"}
    if name not in classes:
        raise AscendifyError(f"--optimizer '{name}': expected one of {', '.join(OPTIMIZERS)}")
    cls = getattr(torch.optim, classes[name])
    kwargs = {"foreach": foreach}
    if name == "sgd":
        kwargs.update(lr=0.01, momentum=0.9)
    return cls([p for p in params if p.requires_grad], **kwargs)


# ----------------------------------------------------------------------------- checkpointing
def _pattern_regex(pattern: str) -> "re.Pattern":
    """fnmatch where ``*`` may span dots (``blocks.*`` matches ``blocks.0``, not ``blocks.0.mlp``
    unless written ``blocks.*.mlp``): each ``*`` matches within one name part."""
    out = []
    for ch in pattern:
        if ch == "*":
            out.append(r"[^.]+")
        elif ch == "?":
            out.append(r"[^.]")
        else:
            out.append(re.escape(ch))
    return re.compile("^" + "".join(out) + "$")


def modules_matching(model, pattern: str) -> List[str]:
    """Qualified names of the modules ``pattern`` names (outermost only: a match inside an
    already matched module is dropped).  Patterns are comma-separated."""
    regs = [_pattern_regex(p.strip()) for p in pattern.split(",") if p.strip()]
    chosen: List[str] = []
    for name, _ in model.named_modules():
        if not name:
            continue
        if any(r.match(name) for r in regs) and not any(name.startswith(c + ".") for c in chosen):
            chosen.append(name)
    return chosen


def auto_blocks(model, modules: Dict[str, int]) -> List[str]:
    """Each block of the repeated block class holding the most activation memory.

    Blocks: modules with children whose class occurs at least twice; the class whose
    instances' inclusive saved bytes (from ``modules``, a first measurement) sum highest
    wins, outermost instances only.
    """
    incl = _inclusive(modules)
    by_class: Dict[str, List[str]] = {}
    for name, mod in model.named_modules():
        if name and any(True for _ in mod.children()):
            by_class.setdefault(type(mod).__name__, []).append(name)
    best, best_bytes = [], 0
    for names, in_ in ((n, n) for n in by_class.values()):
        if len(names) < 2:
            continue
        outer = [n for n in names if not any(n.startswith(o + ".") for o in names if o != n)]
        total = sum(incl.get(n, 0) for n in outer)
        if total > best_bytes:
            best, best_bytes = outer, total
    return best


def _inclusive(modules: Dict[str, int]) -> Dict[str, int]:
    incl: Dict[str, int] = {}
    for name, b in modules.items():
        parts = name.split(".") if name else []
        for i in range(len(parts) + 1):
            key = ".".join(parts[:i])
            incl[key] = incl.get(key, 0) + b
    return incl


@contextlib.contextmanager
def checkpointed(model, names: Sequence[str], rec_ref: list):
    """Wrap the forward of each named module in ``torch.utils.checkpoint.checkpoint``
    (non-reentrant, no RNG stashing); the inputs the checkpoint keeps are counted as
    activations.  Restores the forwards on exit."""
    import torch
    from torch.utils.checkpoint import checkpoint
    mods = dict(model.named_modules())
    saved = []
    for name in names:
        mod = mods[name]
        orig = mod.forward

        def fwd(*args, __orig=orig, __name=name, **kwargs):
            rec = rec_ref[0] if rec_ref else None
            if rec is not None and torch.is_grad_enabled():
                for a in list(args) + list(kwargs.values()):
                    if isinstance(a, torch.Tensor):
                        rec.mark_saved(a, module=__name)
            return checkpoint(__orig, *args, use_reentrant=False, preserve_rng_state=False, **kwargs)

        mod.forward = fwd
        saved.append((mod, orig))
    try:
        yield
    finally:
        for mod, orig in saved:
            mod.forward = orig


# ----------------------------------------------------------------------------- the step
# ----------------------------------------------------------------------------- forward's arguments
@dataclass
class ForwardArgs:
    """How the ``--input`` tensors are passed to ``model.forward``.

    ``mapping``: input name -> the parameter it is passed as (``None``: passed positionally — a
    single input whose name is no parameter, the old behaviour); ``defaulted``: optional
    parameters no input gives (left at their defaults); ``signature``: ``forward(idx, targets=None)``.
    """

    mapping: Dict[str, Optional[str]]
    defaulted: List[str]
    signature: str


def forward_args(model, specs) -> ForwardArgs:
    """Map the input specs to ``model.forward``'s parameters by name (``--input NAME`` is the
    parameter NAME).  Raises :class:`AscendifyError` when a name is no parameter (and forward
    takes no ``**kwargs``) or a parameter without a default is given by no input."""
    import inspect

    names = [s.name for s in specs]
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return ForwardArgs({n: (None if len(names) == 1 else n) for n in names}, [], "forward(...)")
    kinds = inspect.Parameter
    params = [p for p in sig.parameters.values() if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY,
                                                              kinds.POSITIONAL_ONLY)]
    var_kw = any(p.kind == kinds.VAR_KEYWORD for p in sig.parameters.values())
    text = f"forward{sig}".replace(" -> ", " -> ")
    by_name = {p.name: p for p in params}
    unknown = [n for n in names if n not in by_name]
    if unknown and len(names) == 1 and params:
        mapping = {names[0]: None}  # one input named otherwise: the first parameter, positionally
        given = {params[0].name}
    elif unknown and not var_kw:
        raise AscendifyError(f"--input {unknown[0]}: {text} has no parameter '{unknown[0]}'; --input NAME is passed as "
                             f"the parameter of that name ({', '.join(by_name) or 'none'})")
    else:
        mapping = {n: n for n in names}
        given = set(names)
    missing = [p.name for p in params if p.default is kinds.empty and p.name not in given]
    if missing:
        raise AscendifyError(f"{text}: parameter '{missing[0]}' has no default and no --input gives it; "
                             f"add --input {missing[0]}:SHAPE[:DTYPE]")
    defaulted = [p.name for p in params if p.default is not kinds.empty and p.name not in given]
    return ForwardArgs(mapping, defaulted, text)


def forward_call(model, specs, inputs, args: Optional[ForwardArgs]):
    """``model(...)`` with the inputs passed as :func:`forward_args` says."""
    if args is None:
        from ascendify.probe.model import _call
        return _call(model, specs, inputs)
    pos = [t for s, t in zip(specs, inputs) if args.mapping.get(s.name) is None]
    kw = {args.mapping[s.name]: t for s, t in zip(specs, inputs) if args.mapping.get(s.name) is not None}
    return model(*pos, **kw)


def has_scalar_loss(out) -> bool:
    """True when the output holds a 0-dim floating-point tensor that requires grad (a loss):
    ``loss``, ``(logits, loss)``, ``{"loss": ...}``, a ModelOutput with ``loss``."""
    import torch
    found = []

    def walk(o, depth=0):
        if depth > 4 or found:
            return
        if isinstance(o, torch.Tensor):
            if o.dim() == 0 and o.is_floating_point() and o.requires_grad:
                found.append(o)
        elif isinstance(o, dict):
            for v in o.values():
                walk(v, depth + 1)
        elif isinstance(o, (list, tuple)):
            for v in o:
                walk(v, depth + 1)
        elif hasattr(o, "to_tuple"):
            walk(o.to_tuple(), depth + 1)
    walk(out)
    return bool(found)


def _user_loss(loss_fn, out, specs, inputs):
    import torch
    try:
        loss = loss_fn(out, {s.name: t for s, t in zip(specs, inputs)})
    except AscendifyError:
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's loss function
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise AscendifyError(f"--loss {getattr(loss_fn, '__name__', 'function')}(output, inputs) failed: "
                             f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1 or not loss.requires_grad:
        raise AscendifyError(f"--loss {getattr(loss_fn, '__name__', 'function')}(output, inputs) must return a one-element "
                             "tensor that requires grad (the loss to backpropagate)")
    return loss.reshape(())


def _loss(out, amp: Optional[str], loss_fn=None, specs=(), inputs=()):
    from ascendify.probe.model import _loss_from
    loss = _user_loss(loss_fn, out, specs, inputs) if loss_fn is not None else _loss_from(out)
    if loss is None:
        raise AscendifyError("the model's output has no floating-point tensor that requires grad; "
                             "fit trains on the mean of the float outputs — return the logits or the loss")
    if amp == "fp16":
        loss = loss * 65536.0  # GradScaler's default init_scale: scaled loss, same memory
    return loss


def run_step(model, specs, opts: StepOptions, mode, *, optimizer=None, checkpoint_names: Sequence[str] = (),
             args: Optional[ForwardArgs] = None, loss_fn=None) -> StepTrace:
    """Record one steady-state training step of ``model`` on inputs ``specs`` under ``mode``;
    ``args``: how inputs map to forward's parameters (:func:`forward_args`; None: as probe does);
    ``loss_fn(output, inputs_by_name)``: the loss (default: the mean of the float outputs).
    The trace's ``scalar_loss`` says whether the output held a loss (:func:`has_scalar_loss`)."""
    import torch
    params = [p for p in model.parameters()]
    rec_ref: list = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with mode:
            gen = torch.Generator().manual_seed(0)
            inputs = [s.make("cpu", gen) for s in specs]
        rec = StepRecorder(model)
        rec_ref.append(rec)
        model.train()
        try:
            with checkpointed(model, checkpoint_names, rec_ref), mode, rec:
                rec.track(params, "parameters")
                rec.track(model.buffers(), "parameters")
                if optimizer is not None:
                    rec.track(_opt_tensors(optimizer), "optimizer_states")
                rec.track(inputs, "inputs")
                rec.set_phase("forward")
                amp_ctx = (torch.autocast(opts.device_type, dtype=getattr(torch, AMP_DTYPES[opts.amp]))
                           if opts.amp else contextlib.nullcontext())
                with amp_ctx:
                    out = forward_call(model, specs, inputs, args)
                    scalar_loss = has_scalar_loss(out)
                    loss = _loss(out, opts.amp, loss_fn, specs, inputs)
                del out
                rec.set_phase("backward")
                rec.trace.phase_starts["backward_first"] = len(rec.trace.events)
                forward_end_saved = _live_saved(rec)
                loss.backward()
                del loss
                for p in params:
                    if p.grad is not None:
                        rec.track([p.grad], "gradients")
                if optimizer is not None:
                    rec.set_phase("optimizer")
                    optimizer.step()
                    rec.track(_opt_tensors(optimizer), "optimizer_states")
                rec.set_phase("zero_grad")
                if optimizer is not None:
                    optimizer.zero_grad(set_to_none=True)
                else:
                    for p in params:
                        p.grad = None
                del inputs
        except AscendifyError:
            raise
        except BaseException as exc:  # noqa: BLE001 - the user's model on fake tensors
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise AscendifyError(_model_error(exc, rec)) from None
    rec.trace.phase_starts.pop("backward_first", None)
    rec.trace.forward_end_saved = forward_end_saved  # type: ignore[attr-defined]
    rec.trace.scalar_loss = scalar_loss  # type: ignore[attr-defined]
    return rec.trace


def _model_error(exc: BaseException, rec: StepRecorder) -> str:
    msg = str(exc).splitlines()[0][:300] if str(exc) else ""
    kind = type(exc).__name__
    hint = ""
    if "DataDependent" in kind or "data-dependent" in msg or "item()" in msg:
        hint = " — the model reads tensor values (an .item(), nonzero or a data-dependent shape), which fake tensors do not have"
    where = f" in {rec.phase}" + (f" (module {rec.current_module})" if rec.current_module else "")
    return f"the training step failed{where}: {kind}: {msg}{hint}"


def _live_saved(rec: StepRecorder) -> int:
    st = rec.trace.storages
    return sum(st[s].nbytes for s in rec.live if st[s].saved and st[s].label is None)


def _opt_tensors(optimizer) -> list:
    import torch
    out = []
    for st in optimizer.state.values():
        for v in st.values():
            if isinstance(v, torch.Tensor):
                out.append(v)
    return out


def warm_optimizer(model, optimizer, mode) -> None:
    """Create the optimizer's states (one step on zero gradients, fake) so the measured step is
    the steady state every step after the first has."""
    import torch
    if optimizer is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with mode:
            for p in model.parameters():
                if p.requires_grad:
                    p.grad = torch.zeros_like(p)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)


def category_of(info) -> str:
    if info.label:
        return info.label
    return "activations" if info.saved else "temporaries"


def analyse(trace: StepTrace, model=None) -> Measurement:
    """Replay ``trace``: live bytes after each event, the peak, the split at the peak."""
    storages = trace.storages
    cats = {sid: category_of(info) for sid, info in storages.items()}
    live = 0
    per = dict.fromkeys(CATEGORIES, 0)
    timeline: List[int] = []
    cat_tl: Dict[str, List[int]] = {c: [] for c in CATEGORIES}
    peak, peak_i, peak_split = -1, 0, dict(per)
    events: List[tuple] = []
    size: Dict[int, int] = {}
    for i, ev in enumerate(trace.events):
        live += ev.nbytes
        per[cats[ev.sid]] += ev.nbytes
        cur = size.get(ev.sid, 0)
        if cur:
            events.append(("free", ev.sid))
        if cur + ev.nbytes > 0:
            events.append(("alloc", ev.sid, cur + ev.nbytes))
            size[ev.sid] = cur + ev.nbytes
        else:
            size.pop(ev.sid, None)
        timeline.append(live)
        for c in CATEGORIES:
            cat_tl[c].append(per[c])
        if live > peak:
            peak, peak_i, peak_split = live, i, dict(per)
    if peak < 0:
        peak = 0
    peak_phase = trace.events[peak_i].phase if trace.events else "setup"
    totals = {c: sum(info.nbytes for info in storages.values() if info.label == c)
              for c in ("parameters", "gradients", "optimizer_states", "inputs")}
    totals["saved_activations"] = getattr(trace, "forward_end_saved", 0)
    modules: Dict[str, int] = {}
    for info in storages.values():
        if info.saved and info.label is None:
            modules[info.module or ""] = modules.get(info.module or "", 0) + info.nbytes
    types = {}
    if model is not None:
        types = {name: type(m).__name__ for name, m in model.named_modules()}
    return Measurement(peak_bytes=peak, peak_index=peak_i, peak_phase=peak_phase, split=peak_split, totals=totals,
                       modules=modules, module_types=types, events=events, timeline=timeline,
                       category_timeline=cat_tl, phase_starts=dict(trace.phase_starts), ops=trace.ops)


# ----------------------------------------------------------------------------- session
class FitSession:
    """A fake model built once, measured under several options and batch sizes.

    ``target``: ``pkg.module:factory`` or a callable returning an ``nn.Module``;
    ``specs``: :class:`ascendify.probe.spec.InputSpec` list (axis 0 is the batch).
    """

    def __init__(self, target, specs, optimizer: str = "adam", foreach: bool = True,
                 alloc_conf: Optional[str] = None, loss_fn=None):
        self.alloc_conf = alloc_conf
        self.mode = fake_mode()
        self.model, self.built_on = build_fake_model(target, self.mode)
        self.specs = list(specs)
        self.args = forward_args(self.model, self.specs)
        self.loss_fn = loss_fn
        self.scalar_loss: Optional[bool] = None  # whether the last measured step's output held a loss
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with self.mode:
                self.optimizer = make_optimizer(optimizer, self.model.parameters(), foreach)
        warm_optimizer(self.model, self.optimizer, self.mode)
        self.optimizer_name = optimizer
        self.foreach = foreach
        self._baseline_modules: Optional[Dict[str, int]] = None

    def specs_at(self, batch: Optional[int]):
        if batch is None:
            return self.specs
        return [s.with_shape((batch,) + tuple(s.shape[1:])) for s in self.specs]

    def checkpoint_names(self, pattern: Optional[str]) -> List[str]:
        if not pattern:
            return []
        if pattern == "auto":
            if self._baseline_modules is None:
                self.measure(StepOptions(optimizer=self.optimizer_name, foreach=self.foreach))
            names = auto_blocks(self.model, self._baseline_modules or {})
        else:
            names = modules_matching(self.model, pattern)
        if not names:
            what = "no repeated block class with saved activations" if pattern == "auto" else \
                f"--checkpointing '{pattern}' names no module (names look like {', '.join(_example_names(self.model))})"
            raise AscendifyError(what)
        return names

    def measure(self, opts: StepOptions, batch: Optional[int] = None) -> Measurement:
        t0 = time.perf_counter()
        names = self.checkpoint_names(opts.checkpointing)
        specs = self.specs_at(batch)
        trace = run_step(self.model, specs, opts, self.mode, optimizer=self.optimizer, checkpoint_names=names,
                         args=self.args, loss_fn=self.loss_fn)
        self.scalar_loss = getattr(trace, "scalar_loss", None)
        m = analyse(trace, self.model)
        m.checkpointed = names
        m.seconds = time.perf_counter() - t0
        m.batch = specs[0].shape[0] if specs and specs[0].shape else None
        m.inputs = [s.text() for s in specs]
        if not opts.checkpointing and not opts.amp and self._baseline_modules is None:
            self._baseline_modules = m.modules
        return m


def _example_names(model, n: int = 4) -> List[str]:
    names = [name for name, _ in model.named_modules() if name]
    return names[:n] or ["(the model has no submodules)"]
