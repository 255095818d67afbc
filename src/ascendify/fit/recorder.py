"""Record every tensor storage allocation and free of one training step, in order.

:class:`StepRecorder` is a ``TorchDispatchMode`` run inside ``FakeTensorMode`` (so no
tensor memory is allocated): each op's outputs are looked at, every storage not seen before
is an *allocation* (its ``nbytes()``), and a weak reference to the storage object reports its
*free* when the last tensor using it dies (PyTorch keeps one Python object per live storage,
so the callback fires when the storage itself is released).  Storages of the tensor subclass
kind are unpacked with ``torch.distributed._tools.common_utils.get_untyped_storages`` — the
same walk ``torch.distributed._tools.mem_tracker.MemTracker`` does.

Why not ``MemTracker`` itself: it keeps running totals per category, not the ordered
alloc/free sequence the caching-allocator model replays, and it labels every tensor made
in the forward pass an activation, where the report needs *saved for backward* apart from
forward temporaries.  What is saved for backward is learned here from
``torch.autograd.graph.saved_tensors_hooks`` (the pack hook sees every tensor autograd keeps,
and returns a detached alias of it: same storage, no extra memory); the module that saved it
is the innermost module whose forward is running (global forward pre/post hooks).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Dict, List, Optional

CATEGORIES = ("parameters", "gradients", "optimizer_states", "inputs", "activations", "temporaries")
"""The split at the peak.  ``parameters`` includes buffers (BatchNorm running stats);
``activations`` are tensors autograd saved for backward (plus the inputs activation
checkpointing keeps); ``temporaries`` is everything else (forward scratch, the gradients of
activations in backward, optimizer-step scratch)."""


@dataclass
class Event:
    """One storage allocation (``nbytes > 0``) or free (``nbytes < 0``) at op ``op_index``."""

    sid: int
    nbytes: int
    op_index: int
    phase: str


@dataclass
class StorageInfo:
    sid: int
    nbytes: int
    label: Optional[str] = None  # parameters / gradients / optimizer_states / inputs (set from outside)
    saved: bool = False          # packed for backward
    module: Optional[str] = None  # fqn of the module whose forward saved it first
    phase: str = ""


@dataclass
class StepTrace:
    """What a recorded step leaves: storages, the ordered event list, phase boundaries."""

    storages: Dict[int, StorageInfo] = field(default_factory=dict)
    events: List[Event] = field(default_factory=list)
    phase_starts: Dict[str, int] = field(default_factory=dict)  # phase -> index of its first event
    ops: int = 0


def _torch_dispatch_mode():
    from torch.utils._python_dispatch import TorchDispatchMode
    return TorchDispatchMode


class StepRecorder:
    """Context manager: ``with fake_mode, StepRecorder(model) as rec: ...``.

    ``rec.phase`` names the part of the step being run (``setup``, ``forward``,
    ``backward``, ``optimizer``, ``zero_grad``); :meth:`track` registers tensors that
    already exist (parameters, optimizer states, inputs) as allocated at the start.
    """

    def __init__(self, model=None):
        import torch
        self._torch = torch
        self.trace = StepTrace()
        self.phase = "setup"
        self._refs: Dict[int, tuple] = {}  # id(storage) -> (weakref, sid)
        self._next = 0
        self._fqn = {}
        if model is not None and isinstance(model, torch.nn.Module):
            self._fqn = {id(m): name for name, m in model.named_modules()}
        self._stack: List[str] = []
        self.live = set()  # sids of the storages alive now
        self.closed = False
        self._mode = None
        self._hooks = []
        self._saved_ctx = None

    # ---------------------------------------------------------------- storages
    def _sid_of(self, st) -> Optional[int]:
        ent = self._refs.get(id(st))
        if ent is not None and ent[0]() is st:
            return ent[1]
        return None

    def storage_ids(self, t) -> List[int]:
        """The recorder's ids for the storages of tensor ``t`` (registering new ones)."""
        from torch.distributed._tools.common_utils import get_untyped_storages
        return [self._register(st) for st in get_untyped_storages(t)]

    def _register(self, st) -> int:
        sid = self._sid_of(st)
        if sid is not None:
            info = self.trace.storages[sid]
            nb = st.nbytes()
            if nb != info.nbytes:  # resize_ of a known storage
                self.trace.events.append(Event(sid, nb - info.nbytes, self.trace.ops, self.phase))
                info.nbytes = nb
            return sid
        sid = self._next
        self._next += 1
        nb = st.nbytes()
        key = id(st)
        trace = self.trace
        refs = self._refs

        def freed(ref, sid=sid, key=key):
            info = trace.storages[sid]
            self.live.discard(sid)
            if info.nbytes and not self.closed:  # frees after the step are not part of it
                trace.events.append(Event(sid, -info.nbytes, trace.ops, self.phase))
            ent = refs.get(key)
            if ent is not None and ent[0] is ref:
                del refs[key]

        self._refs[key] = (weakref.ref(st, freed), sid)
        trace.storages[sid] = StorageInfo(sid, nb, phase=self.phase)
        self.live.add(sid)
        if nb:
            trace.events.append(Event(sid, nb, trace.ops, self.phase))
        return sid

    def track(self, tensors, label: str) -> None:
        """Register existing tensors (an iterable) and label their storages."""
        for t in tensors:
            if isinstance(t, self._torch.Tensor):
                for sid in self.storage_ids(t):
                    if self.trace.storages[sid].label is None:
                        self.trace.storages[sid].label = label

    def mark_saved(self, t, module: Optional[str] = None) -> None:
        for sid in self.storage_ids(t):
            info = self.trace.storages[sid]
            if not info.saved:
                info.saved = True
                info.module = module if module is not None else (self._stack[-1] if self._stack else "")

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        self.trace.phase_starts.setdefault(phase, len(self.trace.events))

    @property
    def current_module(self) -> str:
        return self._stack[-1] if self._stack else ""

    # ---------------------------------------------------------------- context
    def __enter__(self) -> "StepRecorder":
        torch = self._torch
        rec = self

        class _Mode(_torch_dispatch_mode()):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                rec.trace.ops += 1
                rec._outputs(out)
                return out

        def pre(mod, args):
            rec._stack.append(rec._fqn.get(id(mod), type(mod).__name__))

        def post(mod, args, out):
            if rec._stack:
                rec._stack.pop()

        from torch.nn.modules import module as nnmod
        self._hooks = [nnmod.register_module_forward_pre_hook(pre), nnmod.register_module_forward_hook(post)]

        def pack(t):
            rec.mark_saved(t)
            return t.detach()

        def unpack(t):
            return t

        self._saved_ctx = torch.autograd.graph.saved_tensors_hooks(pack, unpack)
        self._saved_ctx.__enter__()
        self._mode = _Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.closed = True
        self._mode.__exit__(*exc)
        self._saved_ctx.__exit__(*exc)
        for h in self._hooks:
            h.remove()
        self._hooks = []

    def _outputs(self, out) -> None:
        torch = self._torch
        if isinstance(out, torch.Tensor):
            self.storage_ids(out)
        elif isinstance(out, (list, tuple)):
            for o in out:
                self._outputs(o)
