"""``ascendify profile compare GPU_TRACE NPU_DIR``: device time per aten op, CUDA vs NPU.

Both sides are reduced to *device time per top-level aten op* (the op the
model called, e.g. ``aten::linear``; nested ops are its implementation):

* GPU (torch.profiler chrome trace, ``{"traceEvents": [...]}``): kernels
  (``cat`` ``kernel`` / ``gpu_memcpy`` / ``gpu_memset``) are joined to their
  launching runtime call by ``args.correlation``; the runtime call is inside
  an aten op on the same host thread.
* NPU (``trace_view.json``): device tasks in the ``Ascend Hardware`` process
  are joined to the host by the ``async_npu`` flow events (``s`` on the host
  thread, ``f`` at the task's start on the device stream).

Times are µs, normalised per profiler step when both traces have
``ProfilerStep#`` markers (otherwise totals).
"""

from __future__ import annotations

import bisect
import os
from collections import defaultdict

from ascendify.errors import AscendifyError
from ascendify.profile.analyze import _dur, _ts, top_level_ops
from ascendify.profile.reader import locate, read_trace

GPU_KERNEL_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}


def _attribute(tops: dict, host_points: list) -> dict:
    """``host_points``: ``[(pid, tid, ts, device_us)]`` → ``{op: [calls_with_device_work, device_us]}``."""
    index = {k: ([t for t, _, _ in v], v) for k, v in tops.items()}
    out: dict = defaultdict(lambda: [0, 0.0, set()])
    unattributed = 0.0
    for pid, tid, ts, dev in host_points:
        entry = index.get((pid, tid))
        op = None
        if entry:
            starts, ops = entry
            i = bisect.bisect_right(starts, ts) - 1
            if i >= 0 and ts <= ops[i][0] + ops[i][1]:
                op = ops[i]
        if op is None:
            unattributed += dev
            continue
        o = out[op[2]]
        o[1] += dev
        o[2].add(op[0])
    res = {k: {"calls": len(v[2]), "device_us": v[1]} for k, v in out.items()}
    if unattributed:
        res["(outside aten ops)"] = {"calls": 0, "device_us": unattributed}
    return res


def gpu_op_times(events: list) -> dict:
    """``{aten op: {"calls", "device_us"}}`` from a CUDA torch.profiler trace."""
    kernels: dict = defaultdict(float)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in GPU_KERNEL_CATS:
            c = (e.get("args") or {}).get("correlation")
            if c is not None:
                kernels[c] += _dur(e)
    points = []
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver", "Runtime", "Driver"):
            c = (e.get("args") or {}).get("correlation")
            t = _ts(e)
            if c in kernels and t is not None:
                points.append((e.get("pid"), e.get("tid"), t, kernels[c]))
    return _attribute(top_level_ops(events), points)


def npu_op_times(events: list) -> dict:
    """``{aten op: {"calls", "device_us"}}`` from torch_npu's ``trace_view.json``."""
    procs = {e.get("pid"): (e.get("args") or {}).get("name", "") for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    hw = {p for p, n in procs.items() if n == "Ascend Hardware"}
    tasks = {}
    for e in events:
        if e.get("ph") == "X" and e.get("pid") in hw:
            t = _ts(e)
            if t is not None:
                tasks[(e.get("pid"), e.get("tid"), round(t, 3))] = tasks.get((e.get("pid"), e.get("tid"), round(t, 3)), 0.0) + _dur(e)
    starts, ends = {}, {}
    for e in events:
        if e.get("cat") != "async_npu":
            continue
        if e.get("ph") == "s":
            starts[e.get("id")] = e
        elif e.get("ph") == "f":
            ends[e.get("id")] = e
    points = []
    for fid, s in starts.items():
        f = ends.get(fid)
        if f is None:
            continue
        ft, st = _ts(f), _ts(s)
        if ft is None or st is None:
            continue
        dev = tasks.get((f.get("pid"), f.get("tid"), round(ft, 3)))
        if dev is not None:
            points.append((s.get("pid"), s.get("tid"), st, dev))
    return _attribute(top_level_ops(events), points)


def _steps(events: list) -> int:
    return sum(1 for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))


def compare(gpu_trace: str, npu_dir: str, top: int = 20) -> dict:
    """Compare per-op device time.  Raises ``AscendifyError`` when either side
    has no usable data (naming the file and what was expected)."""
    if not os.path.isfile(gpu_trace):
        raise AscendifyError(f"{gpu_trace}: no such file (expected a CUDA torch.profiler chrome trace, e.g. from prof.export_chrome_trace('trace.json'))")
    gev, notes = read_trace(gpu_trace)
    if not gev:
        raise AscendifyError(notes[0] if notes else f"{gpu_trace}: no trace events")
    pd = locate(npu_dir)
    tv = pd.files.get("trace_view.json")
    if not tv:
        raise AscendifyError(f"{pd.output}: no trace_view.json (compare needs the NPU timeline; profile with torch_npu.profiler and on_trace_ready=tensorboard_trace_handler)")
    nev, n2 = read_trace(tv)
    notes += n2
    if not nev:
        raise AscendifyError(n2[0] if n2 else f"{tv}: no trace events")
    g, n = gpu_op_times(gev), npu_op_times(nev)
    if not g:
        notes.append(f"{gpu_trace}: no GPU kernels linked to aten ops (expected 'kernel' events with args.correlation; was the trace recorded with ProfilerActivity.CUDA?)")
    if not n:
        notes.append(f"{tv}: no device tasks linked to aten ops (expected async_npu flow events; profiler level too low?)")
    gs, ns = _steps(gev), _steps(nev)
    per_step = gs > 0 and ns > 0
    gdiv, ndiv = (gs, ns) if per_step else (1, 1)
    rows = []
    for op in set(g) | set(n):
        gu = g.get(op, {}).get("device_us", 0.0) / gdiv
        nu = n.get(op, {}).get("device_us", 0.0) / ndiv
        rows.append({
            "op": op, "gpu_calls": g.get(op, {}).get("calls", 0), "gpu_us": round(gu, 3),
            "npu_calls": n.get(op, {}).get("calls", 0), "npu_us": round(nu, 3),
            "ratio": round(nu / gu, 3) if gu else None, "diff_us": round(nu - gu, 3),
        })
    rows.sort(key=lambda r: -r["diff_us"])
    gt = sum(r["gpu_us"] for r in rows)
    nt = sum(r["npu_us"] for r in rows)
    return {
        "gpu_trace": gpu_trace, "npu_trace": tv, "per_step": per_step, "gpu_steps": gs, "npu_steps": ns,
        "gpu_total_us": round(gt, 3), "npu_total_us": round(nt, 3), "ratio": round(nt / gt, 3) if gt else None,
        "slower_on_npu": [r for r in rows if r["diff_us"] > 0][:top],
        "faster_on_npu": sorted((r for r in rows if r["diff_us"] < 0), key=lambda r: r["diff_us"])[:top],
        "ops": len(rows), "notes": notes,
    }


def render_compare(c: dict) -> str:
    """The text report: one table per direction, its op column as wide as its longest op (at most
    40); where a table is wider than the report's width (ascendify.termtable), one line per op
    (``op — GPU calls 3 · GPU 10.0 · …``) wrapped to the width, as every table that does not fit."""
    from ascendify.profile.cli import _fit
    from ascendify.termtable import report_width, wrap

    width = report_width()
    unit = "µs/step" if c["per_step"] else "µs total"
    out = [f"GPU {c['gpu_trace']} vs NPU {c['npu_trace']}",
           f"device time ({unit}): GPU {c['gpu_total_us']:,.1f}, NPU {c['npu_total_us']:,.1f}"
           + (f" → NPU/GPU = {c['ratio']:.2f}×" if c["ratio"] else ""), ""]
    for title, rows in (("Slower on the NPU (largest extra time first):", c["slower_on_npu"]),
                        ("Faster on the NPU:", c["faster_on_npu"])):
        if not rows:
            continue
        ow = min(40, max([len("aten op")] + [len(r["op"]) for r in rows]))
        head = f"{'aten op':<{ow}} {'GPU calls':>9} {'GPU':>10} {'NPU calls':>9} {'NPU':>10} {'NPU/GPU':>8} {'+NPU':>10}"
        out.append(title)
        if len(head) <= width:
            out.append(head)
        for r in rows:
            ratio = f"{r['ratio']:.2f}×" if r["ratio"] is not None else "new"
            if len(head) <= width:
                out.append(f"{r['op'][:ow]:<{ow}} {r['gpu_calls']:>9} {r['gpu_us']:>10,.1f} {r['npu_calls']:>9} {r['npu_us']:>10,.1f} {ratio:>8} {r['diff_us']:>+10,.1f}")
            else:
                out += wrap(f"{r['op']} — GPU calls {r['gpu_calls']} · GPU {r['gpu_us']:,.1f} · NPU calls {r['npu_calls']} · "
                            f"NPU {r['npu_us']:,.1f} · NPU/GPU {ratio} · +NPU {r['diff_us']:+,.1f}", width, "  ", "      ")
        out.append("")
    for n in c["notes"]:
        out.append(f"note: {n}")
    return "\n".join(_fit(out)).rstrip() + "\n"
