"""Record the aten overloads a model or script dispatches (CPU or meta device).

:class:`OpRecorder` is a ``TorchDispatchMode`` (sees every aten overload that
reaches the backend, i.e. after CompositeImplicitAutograd decomposition) paired
with a ``TorchFunctionMode`` (sees the public torch API being called, and tags
autograd nodes with the forward source line so backward ops are attributed to
the line that created them).

Per op it keeps: overload name (``"linalg_inv_ex"``, ``"add.Tensor"``),
input dtypes and shapes (first few distinct signatures), call count, phase
(``forward`` / ``backward``), the user source line (first stack frame outside
torch, ascendify and the standard library), and the public API active at the
time (``torch.linalg.inv``).  Ops nested inside a device-generic
(CompositeExplicitAutograd) kernel are recorded too when ``reenter(op)`` says
so — on the NPU those inner ops run separately (e.g. ``linalg_lstsq`` →
``linalg_lstsq.out``).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Callable, Optional

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

_SKIP_DIRS = tuple(os.path.dirname(m.__file__) + os.sep for m in (torch,) if getattr(m, "__file__", None))
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # ascendify package
_STDLIB = os.path.dirname(os.__file__) + os.sep
MAX_SIGS = 4

_DK = torch._C.DispatchKey
_UNSET = object()


#: namespaces whose ops are bookkeeping, not compute
IGNORED_NAMESPACES = frozenset({"profiler"})


def _short(func) -> str:
    """``aten::add.Tensor`` → ``add.Tensor``; other namespaces keep ``ns::``."""
    n = func.name()
    if n.startswith("aten::"):
        n = n[6:]
    return n[: -len(".default")] if n.endswith(".default") else n


class OpRecord:
    __slots__ = ("op", "count", "sigs", "lines", "phases", "apis", "parents")

    def __init__(self, op: str):
        self.op = op
        self.count = 0
        self.sigs: list = []      # [(dtypes tuple, shapes tuple)]
        self.lines: dict = {}     # "file:line" -> count
        self.phases: set = set()
        self.apis: dict = {}      # api -> count
        self.parents: set = set()

    def to_dict(self) -> dict:
        return {"op": self.op, "count": self.count,
                "signatures": [{"dtypes": list(d), "shapes": [list(s) if s is not None else None for s in sh]}
                               for d, sh in self.sigs],
                "lines": dict(sorted(self.lines.items(), key=lambda kv: -kv[1])),
                "phases": sorted(self.phases), "apis": dict(sorted(self.apis.items(), key=lambda kv: -kv[1])),
                "inside": sorted(self.parents)}


def _user_frame(skip_extra: tuple = (), stop: "frozenset | None" = None) -> Optional[str]:
    f = sys._getframe(2)
    while f is not None:
        if stop and f.f_code in stop:
            return None
        fn = f.f_code.co_filename
        if not (fn.startswith(_SKIP_DIRS) or fn.startswith(_HERE) or fn.startswith(_STDLIB)
                or fn.startswith("<frozen") or (skip_extra and fn.startswith(skip_extra))):
            return f"{fn}:{f.f_lineno}"
        f = f.f_back
    return None


def _api_name(func) -> Optional[str]:
    mod = getattr(func, "__module__", None) or ""
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None)
    if not name:
        return None
    if name.startswith("_VariableFunctionsClass."):
        return "torch." + name.split(".", 1)[1]
    if name.startswith("TensorBase.") or name.startswith("Tensor."):
        return "Tensor." + name.split(".", 1)[1]
    if mod.startswith("torch.nn.functional"):
        return "torch.nn.functional." + name
    for sub in ("linalg", "special", "fft"):
        if mod in (f"torch._C._{sub}", f"torch.{sub}"):
            return f"torch.{sub}." + (name[len(sub) + 1:] if name.startswith(sub + "_") else name)
    if mod == "torch._C._nn":
        return "torch._C._nn." + name
    if mod.startswith("torch") and "." not in name:
        return "torch." + name
    if mod.startswith("torch"):
        return mod + "." + name
    return None


class _FnMode(TorchFunctionMode):
    def __init__(self, rec: "OpRecorder"):
        super().__init__()
        self.rec = rec

    def __torch_function__(self, func, types, args=(), kwargs=None):
        rec = self.rec
        api = _api_name(func)
        stack = rec._tls.__dict__.setdefault("apis", [])
        pushed = False
        if api and not stack:  # outermost public API only
            stack.append(api)
            pushed = True
        try:
            out = func(*args, **(kwargs or {}))
        finally:
            if pushed:
                stack.pop()
        if rec.tag_autograd and pushed:
            gf = getattr(out, "grad_fn", None) if isinstance(out, torch.Tensor) else None
            if gf is not None:
                try:
                    md = gf.metadata
                    if "asc_line" not in md:
                        md["asc_line"] = _user_frame(rec.skip_files, rec._stop)
                        md["asc_api"] = api
                except Exception:  # noqa: BLE001 - metadata unsupported on some nodes
                    pass
        return out


class OpRecorder(TorchDispatchMode):
    """Context manager recording aten overloads (see module doc).

    ``reenter(op) -> bool``: also record the ops inside the device-generic
    kernel of ``op``.  ``on_op(op, args, kwargs, out)``: optional hook called
    after each op (used for data-dependent and host-sync detection).
    ``skip_files``: path prefixes treated as library code for source lines.
    """

    def __init__(self, reenter: Optional[Callable[[str], bool]] = None, on_op=None,
                 skip_files: tuple = (), tag_autograd: bool = True, track_api: bool = True):
        super().__init__()
        self.records: "dict[str, OpRecord]" = {}
        self.order: list = []
        self.reenter = reenter
        self.on_op = on_op
        self.skip_files = tuple(skip_files)
        self.tag_autograd = tag_autograd
        self.track_api = track_api
        self.phase = "forward"
        self.error: Optional[BaseException] = None
        self.error_op: Optional[str] = None
        self.error_line: Optional[str] = None
        self._tls = threading.local()
        self._fn = _FnMode(self) if track_api else None
        self._line_cache: dict = {}
        self._stop: "frozenset | None" = None
        self._reenter_keys: dict = {}

    # -------------------------------------------------------------- context
    def __enter__(self):
        if self._stop is None:  # frames active at entry are the caller's, not the model's
            codes = set()
            f = sys._getframe(1)
            while f is not None:
                codes.add(f.f_code)
                f = f.f_back
            self._stop = frozenset(codes)
        if self._fn is not None:
            self._fn.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            if self._fn is not None:
                self._fn.__exit__(*exc)

    # -------------------------------------------------------------- recording
    def _where(self) -> "tuple[Optional[str], Optional[str], str]":
        node = None
        try:
            node = torch._C._current_autograd_node()
        except Exception:  # noqa: BLE001
            node = None
        if node is not None:
            md = {}
            try:
                md = node.metadata
            except Exception:  # noqa: BLE001
                pass
            line, api = md.get("asc_line"), md.get("asc_api")
            if line is None:  # node made inside an API: nodes run in reverse order, so reuse the last tagged one
                line, api = getattr(self._tls, "bw_line", None), getattr(self._tls, "bw_api", None)
            else:
                self._tls.bw_line, self._tls.bw_api = line, api
            return line, api, "backward"
        stack = self._tls.__dict__.get("apis") or []
        return _user_frame(self.skip_files, self._stop), (stack[0] if stack else None), self.phase

    def suspended(self):
        """Context manager: ops inside are executed but not recorded (emulation internals)."""
        rec = self

        class _S:
            def __enter__(self_inner):
                rec._tls.off = getattr(rec._tls, "off", 0) + 1

            def __exit__(self_inner, *a):
                rec._tls.off -= 1
                return False
        return _S()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(self._tls, "off", 0) or func.namespace in IGNORED_NAMESPACES:
            return func(*args, **kwargs)
        op = _short(func)
        line, api, phase = self._where()
        parent = getattr(self._tls, "parent", None)
        rec = self.records.get(op)
        if rec is None:
            rec = self.records[op] = OpRecord(op)
            self.order.append(op)
        rec.count += 1
        rec.phases.add(phase)
        if line:
            rec.lines[line] = rec.lines.get(line, 0) + 1
        if api:
            rec.apis[api] = rec.apis.get(api, 0) + 1
        if parent:
            rec.parents.add(parent)
        if len(rec.sigs) < MAX_SIGS:
            dts, shs = [], []
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, torch.Tensor):
                    dts.append(str(a.dtype).replace("torch.", ""))
                    shs.append(tuple(a.shape))
                elif isinstance(a, (list, tuple)) and a and isinstance(a[0], torch.Tensor):
                    for t in a[:4]:
                        if isinstance(t, torch.Tensor):
                            dts.append(str(t.dtype).replace("torch.", ""))
                            shs.append(tuple(t.shape))
            sig = (tuple(dts), tuple(shs))
            if sig not in rec.sigs:
                rec.sigs.append(sig)
        try:
            active = self._tls.__dict__.setdefault("active", set())
            key = None
            if self.reenter is not None and op not in active:
                key = self._reenter_keys.get(op, _UNSET)
                if key is _UNSET:  # not decided yet for this op
                    key = None
                    if self.reenter(op):
                        name = func.name()
                        for k in ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"):
                            if torch._C._dispatch_has_kernel_for_dispatch_key(name, k):
                                key = getattr(_DK, k)
                                break
                    self._reenter_keys[op] = key
            if key is not None:  # re-enter the device-generic kernel with the mode active
                prev = parent
                self._tls.parent = op
                active.add(op)
                try:
                    with self:
                        out = func._op_dk(key, *args, **kwargs)
                finally:
                    self._tls.parent = prev
                    active.discard(op)
                if self.on_op is not None:
                    self.on_op(op, args, kwargs, out, line)
                return out
            out = func(*args, **kwargs)
        except BaseException as exc:
            if self.error is None:
                self.error, self.error_op, self.error_line = exc, op, line
            raise
        if self.on_op is not None:
            self.on_op(op, args, kwargs, out, line)
        return out

    def result(self) -> "list[dict]":
        return [self.records[o].to_dict() for o in self.order]
