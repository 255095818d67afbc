"""Analyse one torch_npu profiler run: top operators, AI_CPU, CPU fallback,
dynamic shapes, step-time split, data loader, fusion and communication.

Units: all times are microseconds (µs) unless a key says ``_ms``; shares are
fractions in [0, 1].  Device-time shares are of the *summed* duration of all
device tasks in ``kernel_details.csv`` (tasks on different streams overlap, so
the sum can exceed wall time).  Facts and thresholds: research notes
``accuracy-profiling-atc.md`` §4 (see ``data/advice.toml``).
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ascendify.profile.reader import (
    Table,
    locate,
    num,
    read_json,
    read_table,
    read_trace,
)

HCCL_CORES = {"HCCL", "COMMUNICATION"}
AICPU = "AI_CPU"
_DOUBLE = {"DOUBLE", "DT_DOUBLE", "FLOAT64", "COMPLEX64", "COMPLEX128", "DT_COMPLEX64", "DT_COMPLEX128"}
_INT64 = {"INT64", "DT_INT64", "UINT64", "DT_UINT64"}


def time_unit(values: Iterable[Optional[float]], decimals: int = 2) -> tuple:
    """One unit for a group of times in µs (a table, a line, a suggestion): (name, divisor, decimals)
    from the largest value, so a group never mixes ms and µs (issue 22); ``decimals`` for s and ms."""
    top = max((abs(v) for v in values if v is not None), default=0.0)
    if top >= 1e6:
        return "s", 1e6, decimals
    if top >= 1e3:
        return "ms", 1e3, decimals
    return "µs", 1.0, 1


def times(*values_us: Optional[float]) -> list:
    """``values_us`` as texts with their unit, all in the one :func:`time_unit` of the group
    (``times(14200, 10000)`` → ``["14.20 ms", "10.00 ms"]``; None → ``"-"``)."""
    u = time_unit(values_us)
    return ["-" if v is None else f"{v / u[1]:,.{u[2]}f} {u[0]}" for v in values_us]


@lru_cache(maxsize=1)
def advice() -> dict:
    text = resources.files("ascendify.profile").joinpath("data").joinpath("advice.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


@lru_cache(maxsize=1)
def fusion_rules() -> list:
    """``[{"api", "pattern", "kind", "since_cann", "regex"}]`` from ``data/fusion_rules.toml``."""
    text = resources.files("ascendify.profile").joinpath("data").joinpath("fusion_rules.toml").read_text(encoding="utf-8")
    out = []
    for r in tomllib.loads(text)["fusion"]:
        r = dict(r)
        r["regex"] = compile_pattern(r["pattern"]) if r["kind"] == "aten" else None
        out.append(r)
    return out


_ITEM = re.compile(r"^\(?([A-Za-z0-9_.]+)\)?(\{\d+,\d+\})?$")


def compile_pattern(pattern: str) -> re.Pattern:
    """``"(permute)-(contiguous){0,1}-(view)"`` → a regex over op names each
    followed by ``;``.  Only bounded repeats of single names are allowed, so
    matching cannot backtrack catastrophically.  ``ValueError`` on other syntax."""
    parts = []
    for item in pattern.split("-"):
        m = _ITEM.match(item.strip())
        if not m:
            raise ValueError(f"bad fusion pattern item {item!r} in {pattern!r}")
        parts.append(f"(?:{re.escape(m.group(1))};){m.group(2) or ''}")
    return re.compile("(?:^|(?<=;))" + "".join(parts))


def _kb_reason(op_type: str, dtypes: list, cann: Optional[str]) -> tuple[Optional[str], str]:
    """Ask the op knowledge base why ``op_type`` with ``dtypes`` runs on AI_CPU;
    ``(reason, "kb")`` or ``(None, why-not)`` when the KB is absent or silent."""
    try:
        from ascendify.kb.aicpu import aicpu_reason  # published by the KB package
    except Exception:  # noqa: BLE001 - optional dependency inside the package
        return None, "kb-unavailable"
    try:
        r = aicpu_reason(op_type, dtypes, cann)
    except Exception:  # noqa: BLE001 - a KB bug must not break the report
        return None, "kb-error"
    return (r, "kb") if r else (None, "kb-no-rule")


def _dtype_hint(dtypes: Iterable[str]) -> Optional[str]:
    up = {d.upper() for d in dtypes if d}
    dbl = sorted(up & _DOUBLE)
    if dbl:
        return f"{'/'.join(dbl)} dtype: AI Core kernels generally have no double/complex variant (typical AI_CPU cause)"
    i64 = sorted(up & _INT64)
    if i64:
        return f"{'/'.join(i64)} dtype: 64-bit integers often have no AI Core kernel (typical AI_CPU cause)"
    return None


def _split_dtypes(v: Optional[str]) -> list:
    if not v:
        return []
    return [d.strip() for d in v.replace(",", ";").split(";") if d.strip()]


# ------------------------------------------------------------------ kernel_details

def analyze_kernels(table: Table, top: int, cann: Optional[str], skip_first_step: bool) -> dict:
    """Aggregate ``kernel_details.csv`` (or ``op_summary_*.csv``) by op type and core type."""
    th = advice()["thresholds"]
    first_step = None
    if skip_first_step and table.has("step_id"):
        steps = {r.get("step_id") for r in table.rows()} - {None}
        nums = sorted(int(s) for s in steps if s.isdigit())
        first_step = str(nums[0]) if len(nums) > 1 else None
    by_type: dict = defaultdict(lambda: {"count": 0, "total_us": 0.0, "max_us": 0.0, "cores": set()})
    by_core: dict = defaultdict(float)
    aicpu: dict = {}
    states: dict = defaultdict(int)
    steps_seen = set()
    total = 0.0
    rows = no_dur = 0
    for r in table.rows():
        if first_step is not None and r.get("step_id") == first_step:
            continue
        d = num(r.get("task_duration"))
        if d is None:
            no_dur += 1
            continue
        rows += 1
        typ = r.get("op_type") or r.get("op_name") or "(unknown)"
        core = (r.get("task_type") or "(unknown)").upper()
        total += d
        by_core[core] += d
        t = by_type[(typ, core in HCCL_CORES or typ.startswith("hcom_"))]
        t["count"] += 1
        t["total_us"] += d
        t["max_us"] = max(t["max_us"], d)
        t["cores"].add(core)
        if r.get("step_id"):
            steps_seen.add(r["step_id"])
        if "op_state" in r:
            states[(r.get("op_state") or "N/A").lower()] += 1
        if core == AICPU:
            key = (typ, r.get("input_data_types") or "", r.get("output_data_types") or "")
            a = aicpu.setdefault(key, {"count": 0, "total_us": 0.0, "max_us": 0.0, "names": []})
            a["count"] += 1
            a["total_us"] += d
            a["max_us"] = max(a["max_us"], d)
            nm = r.get("op_name")
            if nm and nm not in a["names"] and len(a["names"]) < 5:
                a["names"].append(nm)
    hccl_us = sum(v for k, v in by_core.items() if k in HCCL_CORES)
    hccl_us += sum(t["total_us"] for (typ, is_comm), t in by_type.items() if is_comm and not (t["cores"] & HCCL_CORES))

    def share(x: float) -> float:
        return round(x / total, 6) if total else 0.0

    compute = sorted(((k[0], v) for k, v in by_type.items() if not k[1]), key=lambda kv: -kv[1]["total_us"])
    comm = sorted(((k[0], v) for k, v in by_type.items() if k[1]), key=lambda kv: -kv[1]["total_us"])

    def row(name: str, v: dict) -> dict:
        return {"op_type": name, "count": v["count"], "total_us": round(v["total_us"], 3), "avg_us": round(v["total_us"] / v["count"], 3),
                "max_us": round(v["max_us"], 3), "share": share(v["total_us"]), "core_types": sorted(v["cores"])}

    aicpu_out = []
    ops_adv = advice()["aicpu"]["ops"]
    for (typ, din, dout), a in sorted(aicpu.items(), key=lambda kv: -kv[1]["total_us"]):
        dtypes = _split_dtypes(din) + _split_dtypes(dout)
        reason, origin = _kb_reason(typ, dtypes, cann)
        if reason is None:
            reason = _dtype_hint(dtypes)
            origin = origin + "+dtype-heuristic" if reason else origin
        sugg = ops_adv.get(typ.lower()) or (advice()["aicpu"]["double"] if _dtype_hint(dtypes) and {d.upper() for d in dtypes} & _DOUBLE
                                             else advice()["aicpu"]["general"])
        aicpu_out.append({
            "op_type": typ, "input_dtypes": din or None, "output_dtypes": dout or None, "count": a["count"],
            "total_us": round(a["total_us"], 3), "max_us": round(a["max_us"], 3), "share": share(a["total_us"]),
            "names": a["names"], "above_advisor_threshold": a["max_us"] > th["aicpu_task_us"],
            "reason": reason, "reason_source": origin, "suggestion": sugg,
        })
    state_info = None
    if table.has("op_state"):
        static = states.get("static", 0)
        state_info = {"static": static, "dynamic": states.get("dynamic", 0), "other": sum(v for k, v in states.items() if k not in ("static", "dynamic"))}
    return {
        "rows": rows, "rows_without_duration": no_dur, "steps": sorted(steps_seen, key=lambda s: (len(s), s)),
        "skipped_first_step": first_step,
        "total_us": round(total, 3), "hccl_us": round(hccl_us, 3), "hccl_share": share(hccl_us),
        "compute_us": round(total - hccl_us, 3),
        "by_core": {k: {"total_us": round(v, 3), "share": share(v)} for k, v in sorted(by_core.items(), key=lambda kv: -kv[1])},
        "top_ops": [row(n, v) for n, v in compute[:top]],
        "op_types": len(compute),
        "hccl_ops": [row(n, v) for n, v in comm[:top]],
        "aicpu": aicpu_out,
        "op_state": state_info,
    }


def analyze_op_statistic(table: Table, top: int, cann: Optional[str]) -> dict:
    """Top ops and AI_CPU ops from ``op_statistic.csv`` (used when kernel_details is absent)."""
    rows = []
    for r in table.rows():
        t = num(r.get("total_time"))
        if t is None:
            continue
        rows.append((r.get("op_type") or "(unknown)", (r.get("core_type") or "").upper(), int(num(r.get("count")) or 0), t, num(r.get("max_time")), num(r.get("ratio"))))
    total = sum(x[3] for x in rows)
    hccl = sum(x[3] for x in rows if x[1] in HCCL_CORES or x[0].startswith("hcom_"))

    def d(x: tuple) -> dict:
        share = x[5] / 100.0 if x[5] is not None else (x[3] / total if total else 0.0)
        return {"op_type": x[0], "count": x[2], "total_us": round(x[3], 3), "avg_us": round(x[3] / x[2], 3) if x[2] else None,
                "max_us": x[4], "share": round(share, 6), "core_types": [x[1]] if x[1] else []}

    comp = sorted((x for x in rows if not (x[1] in HCCL_CORES or x[0].startswith("hcom_"))), key=lambda x: -x[3])
    aicpu = []
    th = advice()["thresholds"]["aicpu_task_us"]
    for x in sorted((x for x in rows if x[1] == AICPU), key=lambda x: -x[3]):
        reason, origin = _kb_reason(x[0], [], cann)
        aicpu.append(dict(d(x), input_dtypes=None, output_dtypes=None, names=[], reason=reason, reason_source=origin,
                          above_advisor_threshold=(x[4] or 0) > th,
                          suggestion=advice()["aicpu"]["ops"].get(x[0].lower(), advice()["aicpu"]["general"])))
    return {"rows": len(rows), "total_us": round(total, 3), "hccl_us": round(hccl, 3), "hccl_share": round(hccl / total, 6) if total else 0.0,
            "compute_us": round(total - hccl, 3), "top_ops": [d(x) for x in comp[:top]], "op_types": len(comp), "aicpu": aicpu,
            "hccl_ops": [d(x) for x in rows if x[1] in HCCL_CORES or x[0].startswith("hcom_")][:top], "by_core": {}, "op_state": None}


# ------------------------------------------------------------------ step time

_STEP_COLS = ("computing", "communication_not_overlapped", "overlapped", "communication", "free", "stage", "bubble", "preparing")


def analyze_steps(table: Table, skip_first_step: bool) -> Optional[dict]:
    steps = []
    for r in table.rows():
        vals = {c: num(r.get(c)) for c in _STEP_COLS if c in table.columns}
        if vals.get("computing") is None:
            continue
        kind = r.get("op_type") or r.get("type")  # "Type" of msprof-analyze's cluster file (rank / stage)
        if kind == "stage":
            continue  # the cluster file's aggregate row
        label = r.get("step") or " ".join(x for x in (kind, r.get("index")) if x) or str(len(steps) + 1)
        dev = r.get("device_id")
        steps.append(dict(step=label, device=dev, **{k: (round(v, 3) if v is not None else None) for k, v in vals.items()}))
    if not steps:
        return None
    used = steps[1:] if skip_first_step and len(steps) > 1 else steps
    out = split(used, steps, "step_trace_time.csv")
    if len(steps) > 1:
        out["slowest"] = {k: max(steps, key=lambda s: s.get(k) or 0.0)["step"] for k in ("stage", "communication_not_overlapped", "free") if any(s.get(k) for s in steps)}
    return out


def split(used: list, steps: list, source: str) -> dict:
    """Mean step split and verdict.  ``used``: step dicts with computing,
    communication_not_overlapped, overlapped, free (µs) and optional stage."""
    def mean(k: str) -> float:
        vals = [s.get(k) for s in used if s.get(k) is not None]
        return sum(vals) / len(vals) if vals else 0.0

    m = {k: round(mean(k), 3) for k in ("computing", "communication_not_overlapped", "overlapped", "communication", "free", "stage", "preparing")}
    base = m["stage"] or (m["computing"] + m["communication_not_overlapped"] + m["free"])
    shares = {k: (round(m[k] / base, 6) if base else 0.0) for k in ("computing", "communication_not_overlapped", "overlapped", "free")}
    parts = {"compute": m["computing"], "communication": m["communication_not_overlapped"], "free": m["free"]}
    bound = max(parts, key=parts.get) if base else None
    adv = advice()["step_time"]
    return {
        "source": source, "steps": steps, "steps_used": len(used), "mean_us": m, "step_us": round(base, 3), "shares": shares,
        "bound": bound, "advice": adv.get(bound, "") if bound else "",
    }


# ------------------------------------------------------------------ trace_view

def _ts(e: dict) -> Optional[float]:
    try:
        return float(e.get("ts"))
    except (TypeError, ValueError):
        return None


def _dur(e: dict) -> float:
    try:
        return float(e.get("dur") or 0.0)
    except (TypeError, ValueError):
        return 0.0


def top_level_ops(events: list, prefix: str = "aten::") -> dict:
    """``{(pid, tid): [(ts, dur, name)]}`` of outermost ``aten::`` host ops (an op
    inside another aten op on the same thread is its implementation detail)."""
    by_thread: dict = defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and str(e.get("name", "")).startswith(prefix):
            t = _ts(e)
            if t is not None:
                by_thread[(e.get("pid"), e.get("tid"))].append((t, _dur(e), e["name"]))
    out = {}
    for k, evs in by_thread.items():
        evs.sort(key=lambda x: (x[0], -x[1]))
        tops, end = [], float("-inf")
        for t, d, n in evs:
            if t >= end:
                tops.append((t, d, n))
                end = t + d
        out[k] = tops
    return out


def analyze_trace(events: list, skip_first_step: bool) -> dict:
    th = advice()["thresholds"]
    procs = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            procs[e.get("pid")] = (e.get("args") or {}).get("name", "")
    compiles = 0
    loader = []
    steps = 0
    overlap: dict = defaultdict(float)
    optim: dict = defaultdict(int)
    mem_us = 0.0
    for e in events:
        if e.get("ph") != "X":
            continue
        name = str(e.get("name", ""))
        if "aclopCompileAndExecute" in name:
            compiles += 1
        elif "DataLoader" in name and "__next__" in name:
            loader.append(_dur(e))
        elif name.startswith("ProfilerStep#"):
            steps += 1
        elif name.startswith("Optimizer.step#"):
            optim[name.split("#", 1)[1]] += 1
        elif "aclMallocMemInner" in name or "aclrtFree" in name:
            mem_us += _dur(e)
        if procs.get(e.get("pid")) == "Overlap Analysis":
            overlap[name] += _dur(e)
    if skip_first_step and len(loader) > 1:
        loader = loader[1:]
    slow = [d for d in loader if d > th["dataloader_us"]]
    fusion = find_fusions(events, optim)
    out: dict = {
        "events": len(events), "profiler_steps": steps, "online_compiles": compiles,
        "dataloader": {
            "calls": len(loader), "slow_calls": len(slow), "max_us": round(max(loader), 3) if loader else None,
            "total_us": round(sum(loader), 3), "threshold_us": th["dataloader_us"], "starving": bool(slow),
            "advice": advice()["dataloader"]["advice"] if slow else "",
        },
        "fusion": fusion,
        "memory_ops_us": round(mem_us, 3),
        "memory_ops_advice": advice()["memory_ops"]["advice"] if mem_us > th["memory_ops_us"] else "",
    }
    if overlap:
        comp = overlap.get("Computing", 0.0)
        comm_no = overlap.get("Communication(Not Overlapped)", 0.0)
        comm = overlap.get("Communication", 0.0)
        free = overlap.get("Free", 0.0)
        n = max(steps, 1)
        step = {"computing": comp / n, "communication_not_overlapped": comm_no / n, "communication": comm / n,
                "overlapped": max(comm - comm_no, 0.0) / n, "free": free / n, "stage": None}
        out["overlap_split"] = split([step], [dict(step, step="mean")], "trace_view.json (Overlap Analysis lanes)")
    return out


def find_fusions(events: list, optim: Optional[dict] = None) -> list:
    """Fusion opportunities: advisor patterns over each thread's sequence of
    top-level aten ops, and optimizers with a fused NPU version."""
    seqs = ["".join(n[6:] + ";" for _, _, n in ops) for ops in top_level_ops(events).values()]
    found: dict = {}
    for r in fusion_rules():
        if r["kind"] == "aten":
            c = sum(len(r["regex"].findall(s)) for s in seqs)
        else:
            c = (optim or {}).get(r["pattern"], 0)
        if c:
            f = found.setdefault(r["api"], {"api": r["api"], "count": 0, "patterns": [], "since_cann": r["since_cann"]})
            f["count"] += c
            f["patterns"].append(r["pattern"])
    return sorted(found.values(), key=lambda f: -f["count"])


# ------------------------------------------------------------------ other files

def analyze_communication(doc: Any, top: int) -> Optional[dict]:
    """Per-op totals from ``communication.json`` (per rank) or msprof-analyze's cluster file."""
    ops: dict = defaultdict(lambda: {"count": 0, "elapse_ms": 0.0, "transit_ms": 0.0, "wait_ms": 0.0, "sync_ms": 0.0})
    links: dict = defaultdict(lambda: {"size_mb": 0.0, "time_ms": 0.0})

    def _f(v: Any) -> float:
        try:
            return float(v or 0)
        except (TypeError, ValueError):
            return 0.0

    def walk(node: Any, name: str, depth: int) -> None:
        if depth > 8 or not isinstance(node, dict):
            return
        info = node.get("Communication Time Info")
        if isinstance(info, dict):
            if name.startswith("Total Op Info"):
                return
            o = ops[name.split("@", 1)[0]]
            o["count"] += 1
            o["elapse_ms"] += _f(info.get("Elapse Time(ms)"))
            o["transit_ms"] += _f(info.get("Transit Time(ms)"))
            o["wait_ms"] += _f(info.get("Wait Time(ms)"))
            o["sync_ms"] += _f(info.get("Synchronization Time(ms)"))
            for link, b in (node.get("Communication Bandwidth Info") or {}).items():
                if isinstance(b, dict):
                    links[link]["size_mb"] += _f(b.get("Transit Size(MB)"))
                    links[link]["time_ms"] += _f(b.get("Transit Time(ms)"))
            return
        for k, v in node.items():
            if k == "Total Op Info":
                continue
            walk(v, k if "@" in str(k) or not name or "@" not in name else name, depth + 1)

    walk(doc, "", 0)
    if not ops:
        return None
    total = sum(o["elapse_ms"] for o in ops.values())
    wait = sum(o["wait_ms"] for o in ops.values())
    ratio = wait / total if total else 0.0
    return {
        "ops": [dict(op=k, **{kk: round(vv, 3) if isinstance(vv, float) else vv for kk, vv in v.items()})
                for k, v in sorted(ops.items(), key=lambda kv: -kv[1]["elapse_ms"])[:top]],
        "elapse_ms": round(total, 3), "wait_ms": round(wait, 3), "wait_ratio": round(ratio, 4),
        "bandwidth_gb_s": {k: round(v["size_mb"] / v["time_ms"], 3) if v["time_ms"] else 0.0 for k, v in links.items() if v["size_mb"]},
        "advice": advice()["communication"]["wait"] if ratio > advice()["thresholds"]["comm_wait_ratio"] else "",
    }


def analyze_fallback(table: Table, top: int) -> list:
    """Host ops with no device time (``operator_details.csv``): CPU-fallback candidates."""
    fb = advice()["fallback"]
    view = set(fb["view_like"])
    th = advice()["thresholds"]["fallback_host_us"]
    agg: dict = defaultdict(lambda: {"calls": 0, "host_us": 0.0})
    for r in table.rows():
        name = r.get("op_name") or ""
        if not name.startswith("aten::") or name[6:] in view:
            continue
        dev = num(r.get("device_total_duration"))
        host = num(r.get("host_total_duration")) or 0.0
        if dev:
            continue
        a = agg[name]
        a["calls"] += 1
        a["host_us"] += host
    out = [{"op": k, "calls": v["calls"], "host_us": round(v["host_us"], 3)} for k, v in agg.items() if v["host_us"] > th]
    return sorted(out, key=lambda x: -x["host_us"])[:top]


# ------------------------------------------------------------------ entry point

def analyze(path: str, top: int = 10, cann: Optional[str] = None, skip_first_step: bool = False) -> dict:
    """Analyse the profiler folder ``path``; see the module docstring for units.
    Raises ``AscendifyError`` when no profiler data is found; problems with
    single files become ``notes`` and the other parts are still reported."""
    pd = locate(path)
    f = pd.files
    notes: list = []
    rep: dict = {"dir": pd.root, "output": pd.output, "files": {k: v for k, v in f.items()}, "notes": notes,
                 "kernels": None, "step_time": None, "trace": None, "communication": None, "cpu_fallback": None}
    if f["kernel_details.csv"]:
        t, n = read_table(f["kernel_details.csv"], ("op_type|op_name", "task_duration"), "(kernel_details.csv: Name, Type, Accelerator Core, Duration(us), ...)")
        notes += n
        if t is not None:
            rep["kernels"] = analyze_kernels(t, top, cann, skip_first_step)
            rep["kernels"]["source"] = f["kernel_details.csv"]
            notes += t.notes
    if rep["kernels"] is None and f["op_statistic.csv"]:
        t, n = read_table(f["op_statistic.csv"], ("op_type", "total_time"), "(op_statistic.csv: OP Type, Core Type, Count, Total Time(us), ...)")
        notes += n
        if t is not None:
            rep["kernels"] = analyze_op_statistic(t, top, cann)
            rep["kernels"]["source"] = f["op_statistic.csv"]
            notes += t.notes
    if f["step_trace_time.csv"]:
        t, n = read_table(f["step_trace_time.csv"], ("computing",), "(step_trace_time.csv: Step, Computing, Communication(Not Overlapped), Overlapped, Free, ...)")
        notes += n
        if t is not None:
            rep["step_time"] = analyze_steps(t, skip_first_step)
            notes += t.notes
    if f["trace_view.json"]:
        events, n = read_trace(f["trace_view.json"])
        notes += n
        if events:
            rep["trace"] = analyze_trace(events, skip_first_step)
            if rep["step_time"] is None and "overlap_split" in rep["trace"]:
                rep["step_time"] = rep["trace"].pop("overlap_split")
    if f["communication.json"]:
        doc, n = read_json(f["communication.json"])
        notes += n
        if doc is not None:
            rep["communication"] = analyze_communication(doc, top)
            if rep["communication"] is None:
                notes.append(f"{f['communication.json']}: no 'Communication Time Info' entries found")
    if f["operator_details.csv"]:
        t, n = read_table(f["operator_details.csv"], ("op_name",), "(operator_details.csv: Name, Host Total Duration(us), Device Total Duration(us), ...)")
        notes += n
        if t is not None and t.has("device_total_duration"):
            rep["cpu_fallback"] = analyze_fallback(t, top)
    missing = [k for k in ("kernel_details.csv", "step_trace_time.csv", "trace_view.json") if not f.get(k)]
    if missing:
        notes.append(f"{pd.output}: not present: {', '.join(missing)} (partial report)")
    rep["dynamic_shape"] = _dynamic(rep)
    rep["suggestions"] = suggestions(rep)
    return rep


def _dynamic(rep: dict) -> dict:
    th = advice()["thresholds"]["online_compiles"]
    st = (rep.get("kernels") or {}).get("op_state")
    compiles = (rep.get("trace") or {}).get("online_compiles", 0)
    no_static = bool(st) and st["static"] == 0 and (st["dynamic"] + st["other"]) > 0
    storm = compiles >= th
    return {"op_state": st, "online_compiles": compiles, "compile_threshold": th,
            "no_static_ops": no_static, "compile_storm": storm, "dynamic": no_static or storm,
            "advice": advice()["dynamic_shape"]["advice"] if (no_static or storm) else ""}


def _rules(codes: Iterable[str]) -> list:
    from ascendify.diagnose.rules import rule_info

    return [r["code"] for r in rule_info(codes)]


def suggestions(rep: dict) -> list:
    """The ordered list of changes to try, each ``{"area", "finding", "change",
    "scan_rules"}`` (``scan_rules``: `ascendify scan` rules that find the cause in code)."""
    adv = advice()
    out = []
    k = rep.get("kernels") or {}
    for a in k.get("aicpu", [])[:5]:
        dt = f" ({a['input_dtypes']} → {a['output_dtypes']})" if a.get("input_dtypes") else ""
        dts = {d.upper() for d in _split_dtypes(a.get("input_dtypes")) + _split_dtypes(a.get("output_dtypes"))}
        rules = list(adv["aicpu"]["rules_double"]) if dts & _DOUBLE else []
        if a["op_type"].lower() in ("index", "indexput", "indexputv2", "nonzero"):
            rules += adv["aicpu"]["rules_index"]
        out.append({"area": "aicpu", "finding": f"{a['op_type']}{dt} runs on AI_CPU: {a['count']} task(s), {times(a['total_us'])[0]}"
                    + (f"; {a['reason']}" if a.get("reason") else ""), "change": a["suggestion"], "scan_rules": _rules(rules)})
    dyn = rep.get("dynamic_shape") or {}
    if dyn.get("dynamic"):
        why = []
        if dyn.get("no_static_ops"):
            why.append("no operator in static OP State")
        if dyn.get("compile_storm"):
            why.append(f"{dyn['online_compiles']} online compiles (aclopCompileAndExecute)")
        out.append({"area": "dynamic-shape", "finding": "; ".join(why), "change": dyn["advice"], "scan_rules": _rules(adv["dynamic_shape"]["rules"])})
    st = rep.get("step_time")
    if st and st.get("bound"):
        out.append({"area": "step-time", "finding": f"{st['bound']}-bound: compute {st['shares']['computing']:.0%}, "
                    f"communication not overlapped {st['shares']['communication_not_overlapped']:.0%}, free {st['shares']['free']:.0%}",
                    "change": st["advice"], "scan_rules": _rules(adv["step_time"]["rules_free"]) if st["bound"] == "free" else []})
    tr = rep.get("trace") or {}
    dl = tr.get("dataloader") or {}
    if dl.get("starving"):
        over, top_ = times(dl["threshold_us"], dl["max_us"])
        out.append({"area": "dataloader", "finding": f"{dl['slow_calls']} of {dl['calls']} data-loader calls > {over} (max {top_})",
                    "change": dl["advice"], "scan_rules": _rules(adv["dataloader"]["rules"])})
    for fu in tr.get("fusion", [])[:5]:
        out.append({"area": "fusion", "finding": f"{fu['count']}× {' | '.join(fu['patterns'][:2])}",
                    "change": f"use {fu['api']} (CANN ≥ {fu['since_cann']})", "scan_rules": []})
    if tr.get("memory_ops_advice"):
        out.append({"area": "memory", "finding": f"{times(tr['memory_ops_us'])[0]} in device memory alloc/free calls", "change": tr["memory_ops_advice"],
                    "scan_rules": _rules(adv["memory_ops"]["rules"])})
    for fb in (rep.get("cpu_fallback") or [])[:3]:
        out.append({"area": "cpu-fallback", "finding": f"{fb['op']}: {fb['calls']} call(s), {times(fb['host_us'])[0]} host time, no device time",
                    "change": adv["fallback"]["advice"], "scan_rules": _rules(adv["fallback"]["rules"])})
    cm = rep.get("communication") or {}
    if cm.get("advice"):
        out.append({"area": "communication", "finding": f"{cm['wait_ratio']:.0%} of communication time is waiting", "change": cm["advice"], "scan_rules": []})
    return out
