"""Event file of one process: ``<events_dir>/events-<pid>.jsonl``, one JSON object per line, flushed per
event (a crash keeps the earlier lines).  Kinds and fields: see the package docstring."""

from __future__ import annotations

import atexit
import json
import linecache
import os
import sys
import sysconfig
import threading
import time
import traceback
from typing import Any, Callable, Dict, List, Optional

_state: Dict[str, Any] = {"dir": None, "root": None, "fh": None, "pid": None}
_lock = threading.Lock()
_at_exit: List[Callable[[], None]] = []
_exit_code: List[int] = []
_is_user_code: Dict[Any, bool] = {}


def _excluded_dirs() -> "tuple[str, ...]":
    dirs = []
    for mod in ("torch", "ascendify"):
        m = sys.modules.get(mod)
        f = getattr(m, "__file__", None)
        if f:
            dirs.append(os.path.dirname(os.path.realpath(f)) + os.sep)
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            dirs.append(os.path.realpath(p) + os.sep)
    return tuple(dict.fromkeys(dirs))


_EXCLUDED: List["tuple[str, ...]"] = []


def configure(events_dir: Optional[str], project_root: Optional[str]) -> None:
    _state["dir"] = events_dir
    _state["root"] = (os.path.realpath(project_root) + os.sep) if project_root else None
    _is_user_code.clear()
    _EXCLUDED.clear()
    if events_dir:
        os.makedirs(events_dir, exist_ok=True)


def is_user_file(path: str) -> bool:
    """True for a file of the user's program: inside project_root (when set), not in site-packages,
    the standard library, torch or ascendify."""
    if not path or path.startswith("<"):
        return False
    if not _EXCLUDED:
        _EXCLUDED.append(_excluded_dirs())
    p = os.path.realpath(path)
    if "site-packages" in p or "dist-packages" in p:
        return False
    root = _state["root"]
    if root is not None and not p.startswith(root):
        return False
    return not p.startswith(_EXCLUDED[0])


def _frame_dict(file: str, line: Optional[int], function: str, code: Optional[str] = None) -> dict:
    if code is None and line:
        code = linecache.getline(file, line).strip()
    return {"file": file, "line": line, "function": function, "code": code or ""}


def _as_dicts(stack: Any) -> List[dict]:
    """A stack given as a frame, a traceback, a list of FrameSummary / (file, line, func, code) / dicts,
    outermost first."""
    if stack is None:
        stack = sys._getframe(1)
    if hasattr(stack, "f_code"):  # a frame: walk outwards
        out = []
        f = stack
        while f is not None:
            out.append(_frame_dict(f.f_code.co_filename, f.f_lineno, f.f_code.co_name))
            f = f.f_back
        return out[::-1]
    if hasattr(stack, "tb_frame"):
        return [_frame_dict(fs.filename, fs.lineno, fs.name, fs.line) for fs in traceback.extract_tb(stack)]
    out = []
    for fs in stack:
        if isinstance(fs, dict):
            out.append(_frame_dict(fs.get("file", ""), fs.get("line"), fs.get("function", ""), fs.get("code")))
        elif isinstance(fs, traceback.FrameSummary):
            out.append(_frame_dict(fs.filename, fs.lineno, fs.name, fs.line))
        else:
            out.append(_frame_dict(*tuple(fs)[:4]))
    return out


def user_frame(stack: Any = None) -> Optional[dict]:
    """The innermost frame of ``stack`` inside project_root that is not in site-packages, the standard
    library, torch or ascendify, as {file, line, function, code}; None if there is none.
    ``stack``: None (the caller's stack), a frame, a traceback, or a list of frames (outermost first)."""
    for fr in reversed(_as_dicts(stack)):
        if is_user_file(fr["file"]):
            return fr
    return None


def user_code_frame(depth: int = 1):
    """The innermost frame object of user code on the current stack, from ``depth`` frames above this
    function (1 = its caller) outwards (per-code-object answer cached), or None."""
    try:
        f = sys._getframe(depth)
    except ValueError:
        return None
    while f is not None:
        co = f.f_code
        u = _is_user_code.get(co)
        if u is None:
            u = _is_user_code[co] = is_user_file(co.co_filename)
        if u:
            return f
        f = f.f_back
    return None


def fast_user_frame(depth: int = 1) -> Optional[dict]:
    """user_frame() of the current stack, cheaply (hot paths); inside backward: the backward() call."""
    f = user_code_frame(depth + 1)
    if f is None:
        return BACKWARD[0] if BACKWARD else None
    return _frame_dict(f.f_code.co_filename, f.f_lineno, f.f_code.co_name)


# the user frame of the running backward() call: backward of npu tensors runs in autograd's device thread,
# whose stack has no user frame
BACKWARD: List[dict] = []


def stack_frames(depth: int = 1, limit: int = 12) -> List[dict]:
    """The innermost ``limit`` frames of the current stack (outermost first), for a "stack" field."""
    return _as_dicts(sys._getframe(depth + 1))[-limit:]


def _handle():
    pid = os.getpid()
    if _state["fh"] is not None and _state["pid"] == pid:
        return _state["fh"]
    d = _state["dir"]
    if not d:
        return None
    try:
        fh = open(os.path.join(d, f"events-{pid}.jsonl"), "a", encoding="utf-8")
    except OSError:
        return None
    _state["fh"], _state["pid"] = fh, pid
    return fh


def emit(kind: str, **fields: Any) -> None:
    """Append one event (no-op without an events_dir)."""
    if not _state["dir"]:
        return
    obj = {"kind": kind, "t": round(time.time(), 3)}
    obj.update(fields)
    line = json.dumps(obj, default=str)
    with _lock:
        fh = _handle()
        if fh is None:
            return
        try:
            fh.write(line + "\n")
            fh.flush()
        except (OSError, ValueError):
            pass


def on_exit(fn: Callable[[], None]) -> None:
    """Register a writer of exit-time events (op counts, device summary), run before "end"."""
    _at_exit.append(fn)


def _exception_event(etype, value, tb) -> None:
    frames = _as_dicts(tb) if tb is not None else []
    emit("exception", type=getattr(etype, "__name__", str(etype)), message=str(value), traceback=frames,
         user_frame=user_frame(frames))


def _run_exit() -> None:
    if os.getpid() != _state.get("owner"):
        return  # a forked child that did not exec (DataLoader worker): its parent reports
    for fn in _at_exit:
        try:
            fn()
        except Exception:  # noqa: BLE001 - never mask the program's own exit
            pass
    emit("end", exit_code=_exit_code[-1] if _exit_code else 0)
    fh = _state.get("fh")
    if fh is not None:
        try:
            fh.close()
        except OSError:
            pass
        _state["fh"] = None


def install_hooks() -> None:
    """sys.excepthook / threading.excepthook (chained), sys.exit code capture, atexit writer."""
    _state["owner"] = os.getpid()
    prev_hook = sys.excepthook

    def excepthook(etype, value, tb):
        if not issubclass(etype, (SystemExit,)):
            _exit_code.append(1)
            _exception_event(etype, value, tb)
        prev_hook(etype, value, tb)

    sys.excepthook = excepthook
    prev_thook = threading.excepthook

    def thread_hook(args):
        if args.exc_type is not SystemExit:
            _exception_event(args.exc_type, args.exc_value, args.exc_traceback)
        prev_thook(args)

    threading.excepthook = thread_hook
    prev_exit = sys.exit

    def exit(code=None):  # noqa: A001 - sys.exit replacement that remembers the code
        _exit_code.append(code if isinstance(code, int) else (0 if code is None else 1))
        prev_exit(code)

    sys.exit = exit
    atexit.register(_run_exit)
