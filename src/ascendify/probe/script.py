"""Script mode: run a user script in a child process with the npu device emulated on the CPU.

The child (:mod:`ascendify.probe._child`) installs :mod:`ascendify.probe.emulate`,
runs the script with ``runpy`` under the recorder, stops it after
``max_steps`` optimizer steps (or backward calls when no optimizer steps) or
``max_seconds``, and writes its records to a temporary JSON file.  The parent
kills it if it does not finish within ``max_seconds + 60`` s (imports included).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from ascendify.errors import AscendifyError


def run_script(script: str, args: list, *, release: str, max_seconds: float, max_steps: int) -> dict:
    if not os.path.isfile(script):
        raise AscendifyError(f"{script}: no such script (give the path of a .py file to --run)")
    with tempfile.TemporaryDirectory(prefix="ascendify-probe-") as tmp:
        out = os.path.join(tmp, "result.json")
        env = dict(os.environ)
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("OMP_NUM_THREADS", "2")
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the user's tree
        env["ASCENDIFY_PROBE_TMP"] = tmp  # torch.save lands here and is removed with it
        cmd = [sys.executable, "-m", "ascendify.probe._child", out, release, str(max_seconds), str(max_steps),
               os.path.abspath(script)] + list(args)
        timeout = max_seconds + 60 if max_seconds > 0 else None
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=timeout)
            tail = proc.stdout.decode("utf-8", "replace")[-2000:]
        except subprocess.TimeoutExpired as exc:
            tail = (exc.stdout or b"").decode("utf-8", "replace")[-2000:]
            if not os.path.exists(out):
                raise AscendifyError(f"{script}: did not stop within {timeout:g} s; lower --max-seconds or "
                                     "check for a blocking call outside torch") from None
        if not os.path.exists(out):
            raise AscendifyError(f"{script}: the probe child process failed before reporting: "
                                 + (tail.strip().splitlines() or ["no output"])[-1])
        with open(out, encoding="utf-8") as fh:
            res = json.load(fh)
    res["stdout_tail"] = tail
    return res
