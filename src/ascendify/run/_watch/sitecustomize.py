"""ascendify run: notes the files a program of the run creates or writes outside its folder.

On PYTHONPATH after the emulator's own site folder (ascendify/run/launch.py), which runs this file as
the sitecustomize it shadows; this one in turn runs the next sitecustomize on sys.path (the user's or
the distribution's).  A ``sys.addaudithook`` hook sees every ``open`` event (``open()``, ``io.open``,
``os.open``) with a write, append, create or truncate mode; paths outside the run's project_root
(and outside the temporary folder, /dev, /proc, ~/.cache and ``__pycache__`` folders) are written
at exit to the process's event file as ``{"kind": "writes_outside", "paths": [...]}``.
"""
import os
import sys


def _chain_shadowed():
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    skip = {here, os.path.join(os.path.dirname(here), "_site")}
    path = [p for p in sys.path if os.path.abspath(p or os.getcwd()) not in skip]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None or not spec.origin:
        return
    if os.path.dirname(os.path.abspath(spec.origin)) in skip:
        return
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)


def _watch():
    cfg_path = os.environ.get("ASCENDIFY_RUN_CONFIG")
    if not cfg_path or not hasattr(sys, "addaudithook"):
        return
    import json
    import tempfile

    try:
        with open(cfg_path, encoding="utf-8") as fh:
            cfg = json.load(fh)
    except (OSError, ValueError):
        return
    root = cfg.get("project_root")
    events_dir = cfg.get("events_dir")
    if not root or not events_dir:
        return
    sep = os.sep
    inside = tuple(os.path.join(os.path.realpath(p), "") for p in (
        root, events_dir, tempfile.gettempdir(), "/dev", "/proc", "/sys",
        os.path.join(os.path.expanduser("~"), ".cache"), os.environ.get("XDG_CACHE_HOME") or "/nonexistent") if p)
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    seen = []
    limit = 50
    realpath, join, getcwd = os.path.realpath, os.path.join, os.getcwd

    def hook(event, args):
        if event != "open" or len(seen) >= limit:
            return
        try:
            path, mode, flags = args
        except ValueError:
            return
        if isinstance(mode, str):
            if not any(c in mode for c in "wax+"):
                return
        elif not (isinstance(flags, int) and flags & write_flags):
            return
        if isinstance(path, int):
            return
        try:
            p = os.fsdecode(path)
        except TypeError:
            return
        if not os.path.isabs(p):
            p = join(getcwd(), p)
        p = realpath(p)
        if (p + sep).startswith(inside) or "__pycache__" in p or p in seen:
            return
        seen.append(p)

    sys.addaudithook(hook)

    def report():
        if not seen:
            return
        import time

        line = json.dumps({"kind": "writes_outside", "t": round(time.time(), 3), "paths": list(seen)})
        try:
            with open(os.path.join(events_dir, f"events-{os.getpid()}.jsonl"), "a", encoding="utf-8") as fh:
                fh.write(line + "\n")
        except OSError:
            pass

    import atexit

    atexit.register(report)


_chain_shadowed()
_watch()
