"""``doctor --deep``: exercise torch_npu in a subprocess with a timeout.

A broken stack can crash (undefined symbol, segfault) or hang the interpreter,
so the probe runs in a child process that prints one JSON line per step; the
parent keeps the last step reached and classifies the crash text with the
patterns in ``doctor/data/doctor_rules.json`` (``crash_patterns``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from ascendify.doctor.model import Check, rules

if TYPE_CHECKING:  # pragma: no cover
    from ascendify.doctor.core import Doctor

MARK = "@@ascendify-deep "

# The probe: each step prints {"step", "ok", ...}; "start" lines tell which step hung.
PROBE = r'''
import json, sys, traceback
M = "@@ascendify-deep "
def out(**kw):
    sys.stdout.write(M + json.dumps(kw) + "\n"); sys.stdout.flush()
def err(e):
    return (type(e).__name__ + ": " + str(e))[:4000]
def step(name, fn):
    out(step=name, start=True)
    try:
        res = fn()
    except BaseException as e:
        out(step=name, ok=False, error=err(e), tb=traceback.format_exc()[-4000:])
        return None, False
    out(step=name, ok=True, **(res or {}))
    return res, True
r, ok = step("import", lambda: (__import__("torch"), __import__("torch_npu"), {
    "torch": __import__("torch").__version__, "torch_npu": getattr(__import__("torch_npu"), "__version__", "?"),
    "cann": getattr(getattr(__import__("torch"), "version", None), "cann", None)})[2])
if not ok: sys.exit(3)
import torch, torch_npu
r, ok = step("available", lambda: {"available": bool(torch.npu.is_available())})
if not ok or not r["available"]: sys.exit(4)
r, ok = step("device", lambda: {"count": torch.npu.device_count(), "name": torch.npu.get_device_name(0)})
if not ok: sys.exit(5)
def op():
    x = torch.ones(4, device="npu:0")
    y = float((x * 2).sum().item())
    torch.npu.synchronize()
    return {"value": y}
r, ok = step("tensor_op", op)
if not ok: sys.exit(6)
def hccl():
    import socket
    import torch.distributed as dist
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    torch.npu.set_device(0)
    dist.init_process_group("hccl", init_method="tcp://127.0.0.1:%d" % port, rank=0, world_size=1)
    try:
        t = torch.ones(2, device="npu:0")
        dist.all_reduce(t)
        v = float(t.sum().item())
    finally:
        dist.destroy_process_group()
    return {"value": v}
if "--no-hccl" not in sys.argv:
    step("hccl", hccl)
'''

STEPS = [
    ("import", "deep.import", "import torch_npu (subprocess)"),
    ("available", "deep.available", "torch.npu.is_available()"),
    ("device", "deep.device", "device count and name"),
    ("tensor_op", "deep.tensor_op", "tiny tensor op on npu:0"),
    ("hccl", "deep.hccl", "HCCL all_reduce on one device"),
]


def classify(text: str) -> Optional[Dict[str, str]]:
    """First crash pattern matching ``text``: ``{"id", "cause", "fix", "source", "line"}``
    where ``line`` is the matching line of the text; None if nothing matches."""
    for pat in rules()["crash_patterns"]:
        rx = re.compile(pat["regex"])
        for line in (text or "").splitlines():
            if rx.search(line):
                return {"id": pat["id"], "cause": pat["cause"], "fix": pat["fix"], "source": pat["source"],
                        "line": line.strip()[:300]}
        if rx.search(text or ""):
            return {"id": pat["id"], "cause": pat["cause"], "fix": pat["fix"], "source": pat["source"],
                    "line": ""}
    return None


def run_probe(python: str, env: Optional[Dict[str, str]], timeout: float,
              hccl: bool = True) -> Tuple[List[dict], str, Optional[int], bool]:
    """Run the probe; return ``(events, stderr_tail, returncode, timed_out)``."""
    argv = [python, "-c", PROBE] + ([] if hccl else ["--no-hccl"])
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                                env=env, start_new_session=True)
    except OSError as exc:
        return [], f"cannot start {python}: {exc.strerror or exc}", None, False
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        out, err = proc.communicate()
    events = []
    for line in (out or "").splitlines():
        if line.startswith(MARK):
            try:
                events.append(json.loads(line[len(MARK):]))
            except ValueError:
                pass
    return events, (err or "")[-8000:], proc.returncode, timed_out


def run_deep(doc: "Doctor") -> List[Check]:
    """The ``deep.*`` checks for a doctor run (live system only)."""
    if not doc.r.is_live:
        return [Check("deep.import", "import torch_npu (subprocess)", "skipped",
                      found="--deep runs only on the live system (not with --root)")]
    if not doc.torch_npu:
        return [Check("deep.import", "import torch_npu (subprocess)", "skipped", found="torch_npu is not installed")]
    python = doc.o.python or sys.executable
    env = dict(doc.env) if doc.env is not None else None
    events, stderr, rc, timed_out = run_probe(python, env, doc.o.deep_timeout)
    return checks_from_events(events, stderr, rc, timed_out, doc.o.deep_timeout)


def checks_from_events(events: List[dict], stderr: str, rc: Optional[int], timed_out: bool,
                       timeout: float) -> List[Check]:
    """Turn probe events into checks (pure; unit-tested with canned events)."""
    done = {e["step"]: e for e in events if "ok" in e}
    started = [e["step"] for e in events if e.get("start")]
    out: List[Check] = []
    blocked = None
    for name, cid, title in STEPS:
        if blocked:
            out.append(Check(cid, title, "skipped", found=f"not reached ({blocked})"))
            continue
        ev = done.get(name)
        if ev is None:
            if name not in started and not timed_out and rc == 0 and name == "hccl":
                out.append(Check(cid, title, "skipped", found="not run"))
                continue
            if timed_out:
                hung = name if name in started else "start-up"
                out.append(Check(cid, title, "fail", found=f"hung in step '{hung}' — killed after {timeout:.0f} s",
                                 fix="a hang here usually means the device is held by another process or the "
                                     "driver is stuck: check `npu-smi info`, then reset the device",
                                 details={"stderr_tail": stderr[-1500:]}))
                blocked = "timed out"
                continue
            cls = classify(stderr)
            sig = f"signal {-rc}" if rc is not None and rc < 0 else f"exit code {rc}"
            found = f"the interpreter died in step '{name}' ({sig})"
            if cls:
                found += f": {cls['line'] or cls['id']} → {cls['cause']}"
            out.append(Check(cid, title, "fail", found=found, fix=cls["fix"] if cls else
                             "rerun the step by hand to see the full error",
                             details={"classification": cls, "stderr_tail": stderr[-1500:]},
                             source=cls["source"] if cls else None))
            blocked = "crashed"
            continue
        if not ev.get("ok"):
            text = (ev.get("error") or "") + "\n" + (ev.get("tb") or "") + "\n" + stderr
            cls = classify(text)
            found = ev.get("error", "error")[:300]
            if cls:
                found += f" → {cls['cause']}"
            out.append(Check(cid, title, "fail", found=found,
                             fix=cls["fix"] if cls else "read the error above and the plog in $HOME/ascend/log",
                             details={"classification": cls, "error": ev.get("error")},
                             source=cls["source"] if cls else None))
            blocked = f"'{name}' failed"
            continue
        if name == "import":
            found = f"torch {ev.get('torch')}, torch_npu {ev.get('torch_npu')}" + (
                f", torch.version.cann {ev['cann']}" if ev.get("cann") else "")
        elif name == "available":
            if not ev.get("available"):
                cls = classify(stderr)
                out.append(Check(cid, title, "fail", found="torch.npu.is_available() is False"
                                 + (f" ({cls['line']} → {cls['cause']})" if cls else ""),
                                 fix=cls["fix"] if cls else "check the devices checks above (npu-smi, /dev/davinci*, "
                                 "ASCEND_RT_VISIBLE_DEVICES)", details={"classification": cls}))
                blocked = "no NPU available"
                continue
            found = "True"
        elif name == "device":
            found = f"{ev.get('count')} device(s); device 0 is {ev.get('name')}"
        elif name == "tensor_op":
            val = ev.get("value")
            if val != 8.0:
                out.append(Check(cid, title, "fail", found=f"(ones(4) * 2).sum() gave {val}, expected 8.0",
                                 fix="wrong numerical result: reinstall the kernels/ops package for the chip"))
                continue
            found = "(ones(4) * 2).sum() == 8.0 on npu:0"
        else:
            val = ev.get("value")
            if val != 2.0:
                out.append(Check(cid, title, "fail", found=f"all_reduce gave {val}, expected 2.0"))
                continue
            found = "init_process_group('hccl', world_size=1) + all_reduce OK"
        out.append(Check(cid, title, "ok", found=found))
    return out
