"""The emulated Ascend host: the in-process part of ``ascendify run``.

This package makes a plain CPU torch behave like torch on an Ascend host with a given torch_npu
release: CUDA absent, ``npu`` a real device type, every aten op judged by the op KB of that release.
The CLI (``ascendify run``), process launching and report merging live in ``cli.py``, ``launch.py``
and ``report.py`` (helper A2); everything else here is the emulator (helper A1).

Interface between the launcher and the emulator
------------------------------------------------

Activation (any Python process, including torchrun workers, DataLoader spawn workers, subprocesses)
    The launcher sets ``ASCENDIFY_RUN_CONFIG=<path of a JSON config file>`` and prepends the folder
    ``src/ascendify/run/_site`` (``ascendify.run.SITE_DIR``) to ``PYTHONPATH``.  Its ``sitecustomize.py``
    first chains to any other ``sitecustomize`` on ``sys.path`` that it shadows, then calls
    ``ascendify.run.boot.activate(config_dict)``.  Nothing happens when the variable is unset.
    ``activate`` is idempotent; it raises :class:`ascendify.errors.AscendifyError` (one line) when the
    installed torch is outside :data:`ascendify.run.boot.SUPPORTED_TORCH` or the config is bad.
    In sitecustomize such an error is printed as one line ``ascendify run: <message>`` on stderr
    and the process exits with code 2 (the user program does not start).

Config JSON keys
    ``torch_npu``        release string (e.g. ``"2.7.1"``; resolved with ``ascendify.kb.ops.resolve_release``)
    ``chip``             SoC name, e.g. ``"Ascend910B3"``
    ``devices``          int, ``torch.npu.device_count()``
    ``mode``             ``"auto"`` | ``"shim"`` | ``"python"`` (auto: shim when a C++ compiler works)
    ``fallback_disabled``  bool (as ``TORCH_NPU_FALLBACK_CPU_DISABLE=1``; the env var itself also counts)
    ``events_dir``       folder for the event files (created if missing)
    ``project_root``     folder of the user's program: frames outside it are "not user code"
    ``cpu_rng``          bool: every npu generator is the CPU default generator and torch.npu's seeding
                         calls are no-ops (``ascendify run --cpu-rng``; one RNG stream for comparisons)

Events: each process appends JSON lines to ``<events_dir>/events-<pid>.jsonl`` (flushed per event,
so a crash keeps the earlier ones).  Every object has ``"kind"`` and ``"t"`` (time.time()); kinds:

    ``start``     {pid, rank (int from RANK or null), argv, torch_npu (release used), chip, mode
                  ("shim"|"python"), limits: [str, ...] (what this mode cannot emulate), torch, devices,
                  release_note}
    ``fallback``  {op ("aten::linalg_inv_ex.inverse", "torchvision::nms"), kb_class, dtype (str|null),
                  user_frame, stack, disabled (bool)}  -- once per op, when the CPU-fallback warning is printed (or raised)
    ``dtype``     {op, dtype ("torch.float64"), action: "warn", user_frame}  -- once per (op, dtype)
    ``autocast``  {device_type, dtype, disabled, requested (the program's ``enabled``), switched_off
                  (requested but torch turned it off), reason ("cuda_unavailable" | "dtype_unsupported" |
                  null), user_frame}  -- once per (device_type, dtype, enabled, requested, call site), at
                  most 20 sites per (device_type, dtype, enabled, requested); also for
                  ``torch.autocast("cuda")`` switched off (dtype null, disabled: true, switched_off: true)
    ``gradscaler`` {event: "skip"|"backoff"|"grow", scale (float after the update)}
                  | {event: "init", device_type, enabled, requested, init_scale, user_frame}  -- per scaler
                  constructed (at most 20)
                  | {event: "counts", constructed, steps, updates}  -- at exit, if any scaler was built
    ``host_sync`` {what ("aten::_local_scalar_dense" = .item()/bool()/float() etc.), user_frame, count}
                  -- the first one per user frame is written at once with count 1; totals per frame
                  are written again at exit (count = n, total: true)
    ``op``        at exit: {counts_by_class: {kb_class: n}, counts_by_op: {"aten::add.Tensor": n}}
    ``device_summary`` at exit: {param_devices: {"npu:0": n, "cpu": n}, source: "moved modules" |
                  "constructed modules"}: the parameters of every Module that was moved with
                  .to()/.npu()/.cuda()/._apply() (or, if none was, of every Module constructed), counted
                  by the device they are on at exit
    ``exception`` {type, message, traceback: [{file, line, function, code}], user_frame}  -- uncaught
                  exception (sys.excepthook and threading.excepthook, chained)
    ``mode``      {mode: "python", reason, limits}  -- mode "auto" chose shim but the shim did not build or
                  load in this process: it runs in the Python mode (a one-line note on stderr says so)
    ``end``       {exit_code}  -- at exit (SystemExit code, 1 after an uncaught exception, else 0)
    ``writes_outside`` {paths: [str, ...]}  -- at exit, if the program wrote files outside project_root
                  (written by the write watcher, ``_watch/sitecustomize.py``, not by :mod:`ascendify.run.events`)

    A ``user_frame`` is ``{file, line, function, code}`` or null; see
    :func:`ascendify.run.events.user_frame` (innermost frame inside project_root that is not in
    site-packages, torch or ascendify).

Other entry points
    ``ascendify.run.boot.limits(mode) -> list[str]``: what the mode ("shim"/"python") cannot emulate.
    ``ascendify.run.boot.SUPPORTED_TORCH``: (lowest, highest) torch ``major.minor`` supported.
    ``ascendify.run.boot.resolve_mode(mode) -> "shim"|"python"``: what "auto" picks here.
    ``ascendify.run.shim.build(verbose=False) -> path``: build (or find cached) the C++ shim; the cache
    is ``$ASCENDIFY_CACHE_DIR/run/torch-<version>/shim-<source hash>/`` (default ``$ASCENDIFY_CACHE_DIR``:
    ``~/.cache/ascendify``).
"""

from __future__ import annotations

import os

SITE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_site")
CONFIG_ENV = "ASCENDIFY_RUN_CONFIG"

__all__ = ["SITE_DIR", "CONFIG_ENV"]
