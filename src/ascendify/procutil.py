"""Worker pools that Ctrl-C stops at once.

A ``concurrent.futures.ProcessPoolExecutor`` left to itself handles Ctrl-C badly: the terminal
sends SIGINT to every process of the foreground group, so each worker prints a
``KeyboardInterrupt`` traceback, and the ``with`` block's ``shutdown(wait=True)`` waits for every
queued task, or for ever when a worker died holding the queue's lock (issue 22).

:func:`worker_pool` is a drop-in for ``ProcessPoolExecutor(...)`` as a context manager:

- workers ignore SIGINT (only the parent reacts to Ctrl-C) and turn SIGTERM into ``SystemExit``,
  so a task being stopped runs its ``finally`` blocks (``fsutil.atomic_write`` removes its
  temporary file) and exits without a traceback (from SIGTERM on, its standard error goes to
  ``os.devnull``);
- on any exception in the block (``KeyboardInterrupt`` above all) the pending tasks are cancelled,
  every worker gets SIGTERM, and those still alive after ``grace`` seconds (default 0.5) get
  SIGKILL; all are reaped before the exception goes on, so no process is left behind;
- a second Ctrl-C while that happens skips the grace period (SIGKILL at once).

The caller's exception then reaches ``ascendify.cli.main``, which prints one line
(``ascendify: interrupted``) and exits 130 (128 + SIGINT), as shells do.  Any command with
worker processes (scan, fix, migrate, run …) should create them through this helper.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterator, Optional

GRACE_S = 0.5
"""Seconds a worker has between SIGTERM and SIGKILL when a pool is stopped."""


def _on_term(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process outright
    # a worker being stopped has nothing to tell the user: whatever its exit prints (multiprocessing's
    # "Process ForkProcess-2:" and a traceback, seen once in CI) would follow "ascendify: interrupted"
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
    raise SystemExit(128 + signum)


def _worker_start(initializer: Optional[Callable], initargs: tuple) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # SIGTERM during the initializer ends the process outright (the executor would log a traceback
    # for an exception there); after it, SystemExit lets a task's finally blocks run
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if initializer is not None:
        initializer(*initargs)
    signal.signal(signal.SIGTERM, _on_term)


def stop_processes(procs: list, grace: float = GRACE_S) -> None:
    """SIGTERM every ``multiprocessing.Process`` of ``procs`` still alive, SIGKILL those alive after
    ``grace`` seconds (at once on a further SIGINT), and reap them all."""
    hurry = {"now": False}

    def _second_sigint(signum, frame) -> None:
        hurry["now"] = True

    try:
        old = signal.signal(signal.SIGINT, _second_sigint)
    except ValueError:  # not the main thread: no handler, the grace period still bounds the wait
        old = None
    try:
        for p in procs:
            with contextlib.suppress(Exception):
                if p.is_alive():
                    p.terminate()
        deadline = time.monotonic() + grace
        while not hurry["now"] and time.monotonic() < deadline and any(_alive(p) for p in procs):
            time.sleep(0.01)
        for p in procs:
            with contextlib.suppress(Exception):
                if p.is_alive():
                    p.kill()
        for p in procs:
            with contextlib.suppress(Exception):
                p.join(1.0)
    finally:
        if old is not None:
            signal.signal(signal.SIGINT, old)


def _noop() -> None:
    return None


def _start_workers(ex: ProcessPoolExecutor) -> None:
    """Start the pool's workers now (with the fork start method the executor forks all of them at
    the first submit) while SIGINT only sets a flag here: a forked worker inherits that handler, so
    a Ctrl-C in the instant before :func:`_worker_start` ignores SIGINT there prints no traceback
    from inside multiprocessing.  A Ctrl-C that came meanwhile is raised here afterwards."""
    hit = {"sigint": False}

    def _flag(signum, frame) -> None:
        hit["sigint"] = True

    try:
        old = signal.signal(signal.SIGINT, _flag)
    except ValueError:  # not the main thread
        ex.submit(_noop)
        return
    try:
        ex.submit(_noop)
    finally:
        signal.signal(signal.SIGINT, old)
    if hit["sigint"]:
        raise KeyboardInterrupt


def _alive(p) -> bool:
    try:
        return p.is_alive()
    except Exception:  # noqa: BLE001 - a process already reaped elsewhere
        return False


@contextlib.contextmanager
def worker_pool(max_workers: int, initializer: Optional[Callable] = None, initargs: tuple = (),
                mp_context: Any = None, grace: float = GRACE_S) -> Iterator[ProcessPoolExecutor]:
    """A ``ProcessPoolExecutor(max_workers, mp_context=…, initializer=…, initargs=…)`` that stops its
    workers within ``grace`` seconds (plus reaping) when the block raises, e.g. on Ctrl-C; see the
    module docstring.  On normal exit it shuts down as the executor's own ``with`` does."""
    ex = ProcessPoolExecutor(max_workers=max_workers, mp_context=mp_context, initializer=_worker_start,
                             initargs=(initializer, initargs))
    try:
        _start_workers(ex)
        yield ex
    except BaseException:
        procs = list((getattr(ex, "_processes", None) or {}).values())
        with contextlib.suppress(Exception):
            ex.shutdown(wait=False, cancel_futures=True)
        stop_processes(procs, grace)
        raise
    else:
        ex.shutdown(wait=True)
