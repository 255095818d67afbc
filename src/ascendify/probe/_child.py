"""Child process of ``ascendify probe --run`` (not a public entry point).

``python -m ascendify.probe._child OUT.json RELEASE MAX_SECONDS MAX_STEPS SCRIPT [ARGS...]``
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import threading
import time
import traceback


def main(argv) -> int:
    out, release, max_seconds, max_steps, script = argv[:5]
    args = argv[5:]
    max_seconds, max_steps = float(max_seconds), int(max_steps)
    from ascendify.probe import emulate
    state = {"steps": 0, "backwards": 0, "max_steps": max_steps, "max_seconds": max_seconds,
             "deadline": time.monotonic() + max_seconds if max_seconds > 0 else None, "stopped": ""}
    modes = emulate.install(release, state)
    from ascendify.kb import ops as kbops
    from ascendify.probe.recorder import OpRecorder
    table = kbops.load_release(release)

    def reenter(op: str) -> bool:
        r = table.ops.get(op)
        return r is not None and r[0] == "composite_explicit"

    def on_op(op, a, k, o, line):
        if state["deadline"] and time.monotonic() > state["deadline"]:
            state["stopped"] = f"max-seconds ({max_seconds:g} s)"
            raise emulate.ProbeStop()

    rec = OpRecorder(reenter=reenter, on_op=on_op)
    state["recorder"] = rec
    if max_seconds > 0:  # a script stuck outside torch: interrupt it a little after the deadline
        def watchdog():
            time.sleep(max_seconds + 10)
            if not done.is_set():
                state["stopped"] = state["stopped"] or f"max-seconds ({max_seconds:g} s, interrupted)"
                import _thread
                _thread.interrupt_main()
        done = threading.Event()
        threading.Thread(target=watchdog, daemon=True).start()
    else:
        done = threading.Event()
    sys.argv = [script] + list(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    error = None
    exit_code = 0
    t0 = time.perf_counter()
    try:  # the first op under a TorchFunctionMode imports torch._dynamo (~2 s): do it before the clock starts
        import torch._dynamo  # noqa: F401
    except Exception:  # noqa: BLE001
        pass
    if max_seconds > 0:  # the clock starts with the script, not with our imports
        state["deadline"] = time.monotonic() + max_seconds
    try:
        for m in modes:
            m.__enter__()
        with rec:
            runpy.run_path(script, run_name="__main__")
    except emulate.ProbeStop:
        pass
    except KeyboardInterrupt:
        if not state["stopped"]:
            state["stopped"] = "interrupted"
    except SystemExit as exc:
        exit_code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exit_code:
            error = {"type": "SystemExit", "message": f"script exited with status {exc.code}", "op": None, "line": None}
    except BaseException as exc:  # noqa: BLE001 - reported with the op and line
        tb = traceback.extract_tb(exc.__traceback__)
        user = [f for f in tb if os.path.abspath(f.filename).startswith(os.path.dirname(os.path.abspath(script)))]
        line = f"{user[-1].filename}:{user[-1].lineno}" if user else rec.error_line
        error = {"type": type(exc).__name__, "message": (str(exc).splitlines() or [""])[0][:500],
                 "op": rec.error_op, "line": line}
    finally:
        done.set()
        for m in reversed(modes):
            try:
                m.__exit__(None, None, None)
            except Exception:  # noqa: BLE001
                pass
    res = {"records": rec.result(), "error": error, "seconds": round(time.perf_counter() - t0, 3),
           "emulation": {"used": emulate.USED, "stopped": state["stopped"] or "script finished",
                         "optimizer_steps": state["steps"], "backward_calls": state["backwards"]}}
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(res, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
