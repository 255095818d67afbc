"""What ``ascendify run`` says at the end: the events of every process of the run, merged.

:func:`load_events` reads ``<events_dir>/events-<pid>.jsonl`` (the emulator's event files, one per
process; kinds in :mod:`ascendify.run`); :func:`build` merges them into one JSON-serialisable
report (per-rank sections, the first failure in time order, fallbacks and dtype findings with the
user frame that reached them, ops per KB class, autocast dtypes, GradScaler activity, host syncs,
the device the parameters ended on); :func:`explain` links the first failure to the scan finding
that explains it; :func:`render_text` prints it for a person.
"""

from __future__ import annotations

import glob
import json
import os
import sys
from typing import Any, Iterable, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PER_RANK_KINDS = ("fallback", "dtype", "autocast", "gradscaler", "host_sync", "exception")


# ----------------------------------------------------------------------------- reading
def load_events(events_dir: str) -> "dict[int, list[dict]]":
    """``{pid: [event, …]}`` from every ``events-<pid>.jsonl`` in ``events_dir``, in file order.
    A line that is not JSON (a process killed while writing) is skipped."""
    out: dict = {}
    for path in sorted(glob.glob(os.path.join(events_dir, "events-*.jsonl"))):
        stem = os.path.basename(path)[len("events-"):-len(".jsonl")]
        try:
            pid = int(stem)
        except ValueError:
            continue
        evs = []
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        ev = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if isinstance(ev, dict) and "kind" in ev:
                        evs.append(ev)
        except OSError:
            continue
        out[pid] = evs
    return out


# ----------------------------------------------------------------------------- merging
def _where(frame: Optional[dict]) -> Optional[str]:
    if not isinstance(frame, dict) or not frame.get("file"):
        return None
    return f"{frame.get('path') or frame['file']}:{frame.get('line')}"


def _rel(path: Optional[str], root: Optional[str]) -> Optional[str]:
    if not path:
        return path
    if root:
        try:
            rel = os.path.relpath(path, root)
        except ValueError:
            return path
        if not rel.startswith(".."):
            return rel.replace(os.sep, "/")
    return path


def _frame(frame: Optional[dict], root: Optional[str]) -> Optional[dict]:
    if not isinstance(frame, dict) or not frame.get("file"):
        return None
    out = {k: frame.get(k) for k in ("file", "line", "function", "code")}
    out["path"] = _rel(frame.get("file"), root)
    return out


def is_user_path(frame: dict) -> bool:
    """A frame of the user's program: inside the project folder (its ``path`` is relative), not in
    an installed package (a virtual environment inside the project)."""
    path = frame.get("path") or ""
    return bool(path) and not os.path.isabs(path) and "site-packages" not in path and "dist-packages" not in path


def process_summary(pid: int, events: list, root: Optional[str]) -> dict:
    """One process (rank) of the run, from its events."""
    start = next((e for e in events if e["kind"] == "start"), {})
    end = next((e for e in reversed(events) if e["kind"] == "end"), None)
    p: dict = {
        "pid": pid,
        "rank": start.get("rank"),
        "argv": start.get("argv"),
        "mode": start.get("mode"),
        "torch_npu": start.get("torch_npu"),
        "chip": start.get("chip"),
        "limits": start.get("limits") or [],
        "t_start": start.get("t"),
        "exit_code": end.get("exit_code") if end else None,
        "ended": end is not None,
        "ops_by_class": {},
        "ops_by_op": {},
        "fallbacks": [],
        "dtype": [],
        "autocast": [],
        "gradscaler": {"skip": 0, "backoff": 0, "grow": 0, "last_scale": None},
        "host_syncs": {"total": 0, "frames": []},
        "param_devices": {},
        "tensors_moved": {},
        "exception": None,
        "writes_outside": [],
    }
    syncs: dict = {}
    for e in events:
        k = e["kind"]
        if k == "op":
            for cls, n in (e.get("counts_by_class") or {}).items():
                p["ops_by_class"][cls] = p["ops_by_class"].get(cls, 0) + int(n or 0)
            for op, n in (e.get("counts_by_op") or {}).items():
                p["ops_by_op"][op] = p["ops_by_op"].get(op, 0) + int(n or 0)
        elif k == "fallback":
            p["fallbacks"].append({"op": e.get("op"), "kb_class": e.get("kb_class"), "dtype": e.get("dtype"),
                                   "user_frame": _frame(e.get("user_frame"), root), "t": e.get("t")})
        elif k == "dtype":
            p["dtype"].append({"op": e.get("op"), "dtype": e.get("dtype"), "action": e.get("action"),
                               "user_frame": _frame(e.get("user_frame"), root), "t": e.get("t")})
        elif k == "autocast":
            p["autocast"].append({"device_type": e.get("device_type"), "dtype": e.get("dtype"),
                                  "disabled": bool(e.get("disabled")), "user_frame": _frame(e.get("user_frame"), root),
                                  "requested": e.get("requested"), "switched_off": bool(e.get("switched_off")),
                                  "reason": e.get("reason")})
        elif k == "gradscaler":
            what = e.get("event")
            if what == "init":
                p["gradscaler"].setdefault("constructed", []).append(
                    {"device_type": e.get("device_type"), "enabled": bool(e.get("enabled")),
                     "requested": bool(e.get("requested", True)), "user_frame": _frame(e.get("user_frame"), root)})
            elif what == "counts":
                p["gradscaler"]["steps"] = int(e.get("steps") or 0)
                p["gradscaler"]["updates"] = int(e.get("updates") or 0)
            if what in ("skip", "backoff", "grow"):
                p["gradscaler"][what] += 1
            if e.get("scale") is not None:
                p["gradscaler"]["last_scale"] = e.get("scale")
        elif k == "host_sync":
            fr = _frame(e.get("user_frame"), root)
            key = (_where(fr) or "?", e.get("what"))
            cur = syncs.setdefault(key, {"what": e.get("what"), "user_frame": fr, "count": 0})
            cur["count"] = max(cur["count"], int(e.get("count") or 1))  # the exit total supersedes the first
        elif k == "device_summary":
            p["param_devices"] = dict(e.get("param_devices") or {})
            p["tensors_moved"] = dict(e.get("tensors_moved") or {})
        elif k == "exception":
            if p["exception"] is None:
                tb = [f for f in (_frame(f, root) for f in (e.get("traceback") or [])) if f]
                uf = _frame(e.get("user_frame"), root) or next((f for f in reversed(tb) if is_user_path(f)), None)
                p["exception"] = {"type": e.get("type"), "message": e.get("message"), "t": e.get("t"),
                                  "traceback": tb, "user_frame": uf}
        elif k == "writes_outside":
            p["writes_outside"].extend(e.get("paths") or [])
    p["host_syncs"]["frames"] = sorted(syncs.values(), key=lambda s: -s["count"])
    p["host_syncs"]["total"] = sum(s["count"] for s in syncs.values())
    return p


def _merge_counts(dicts: Iterable[dict]) -> dict:
    out: dict = {}
    for d in dicts:
        for k, n in d.items():
            out[k] = out.get(k, 0) + n
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _label(p: dict) -> str:
    return f"rank {p['rank']}" if p.get("rank") is not None else f"pid {p['pid']}"


def parameters_verdict(param_devices: dict, failed: bool = False) -> dict:
    """Where the model's parameters ended: ``{"devices", "on", "message", "loud"}``; ``loud`` when
    an Ascend host would train this on the CPU (a run that failed is not said to have trained).
    The counts are parameter tensors (of the modules the program moved, else of every module built)."""
    total = sum(param_devices.values())
    npu = sum(n for d, n in param_devices.items() if str(d).startswith("npu"))
    cpu = sum(n for d, n in param_devices.items() if str(d).startswith("cpu"))
    if total == 0:
        return {"devices": param_devices, "on": None, "loud": False,
                "message": "no model parameters were seen (no nn.Module was built or moved)"}
    if npu == total:
        return {"devices": param_devices, "on": "npu", "loud": False,
                "message": f"parameters on the NPU: {_human_devices(param_devices)}"}
    if cpu == total:
        if failed:
            return {"devices": param_devices, "on": "cpu", "loud": False,
                    "message": f"parameters on the CPU when the program stopped ({cpu:,} parameter tensor(s); "
                               "it failed before they reached the NPU)"}
        return {"devices": param_devices, "on": "cpu", "loud": True,
                "message": f"TRAINED ON THE CPU, NOT THE NPU: all {cpu:,} parameter tensor(s) ended on the CPU; "
                           "an Ascend host runs this program on its CPU (look for `torch.cuda.is_available()` "
                           "or a 'cpu' default choosing the device)"}
    return {"devices": param_devices, "on": "mixed", "loud": not failed,
            "message": f"parameters on two kinds of device: {_human_devices(param_devices)}; "
                       "part of the model stayed on the CPU"}


def _human_devices(d: dict) -> str:
    return ", ".join(f"{n:,} tensor(s) on {k}" for k, n in sorted(d.items(), key=lambda kv: -kv[1]))


def fallback_rule(op: str) -> "tuple[Optional[str], Optional[str]]":
    """(rule code, what to do) for a CPU-fallback op the scan has a rule for: torchvision's C++ ops
    (``torchvision::nms``: OPS008, with what torchvision_npu covers); (None, None) otherwise."""
    ns, _, name = op.partition("::")
    if ns != "torchvision":
        return None, None
    from ascendify.rules.checks.operators import torchvision_op_hint

    hint = torchvision_op_hint(name.split(".")[0])
    if not hint:
        return None, None
    return "OPS008", "stock torchvision has no NPU kernel for it" + hint


def build(events_by_pid: "dict[int, list[dict]]", *, exit_code: Optional[int], command: list, cwd: str,
          project_root: Optional[str], emulated: dict, interrupted: bool = False, notes: Optional[list] = None) -> dict:
    """The merged report of one run (the JSON ``ascendify run --format json`` prints, without the
    envelope).  Processes are ordered by rank, then start time; the first failure is the earliest
    uncaught exception of any process."""
    procs = [process_summary(pid, evs, project_root) for pid, evs in events_by_pid.items()]
    procs.sort(key=lambda p: (p["rank"] is None, p["rank"] if p["rank"] is not None else 0, p["t_start"] or 0))
    failures = [(p["exception"]["t"] or 0, p) for p in procs if p["exception"]]
    failures.sort(key=lambda tp: tp[0])
    first = None
    if failures:
        p = failures[0][1]
        first = dict(p["exception"])
        first.update({"pid": p["pid"], "rank": p["rank"], "process": _label(p)})
    fallbacks: dict = {}
    for p in procs:
        for f in p["fallbacks"]:
            cur = fallbacks.get(f["op"])
            if cur is None:
                rule, hint = fallback_rule(f["op"] or "")
                cur = fallbacks[f["op"]] = {"op": f["op"], "kb_class": f["kb_class"], "dtype": f["dtype"],
                                            "user_frame": f["user_frame"], "where": [], "processes": [],
                                            "rule": rule, "hint": hint}
            if _label(p) not in cur["processes"]:
                cur["processes"].append(_label(p))
            w = _where(f["user_frame"])
            if w and w not in cur["where"]:
                cur["where"].append(w)
    dtypes: dict = {}
    for p in procs:
        for d in p["dtype"]:
            key = (d["op"], d["dtype"])
            cur = dtypes.setdefault(key, {**d, "processes": []})
            if _label(p) not in cur["processes"]:
                cur["processes"].append(_label(p))
    autocast: dict = {}
    for p in procs:
        for a in p["autocast"]:
            key = (a["device_type"], a["dtype"], a["disabled"], a.get("switched_off", False))
            cur = autocast.setdefault(key, {**a, "sites": [], "processes": []})
            where = _where(a.get("user_frame"))
            if a.get("user_frame") and where not in [_where(f) for f in cur["sites"]]:
                cur["sites"].append(a["user_frame"])
            if _label(p) not in cur["processes"]:
                cur["processes"].append(_label(p))
    scaler = {"skip": sum(p["gradscaler"]["skip"] for p in procs), "backoff": sum(p["gradscaler"]["backoff"] for p in procs),
              "grow": sum(p["gradscaler"]["grow"] for p in procs),
              "last_scale": next((p["gradscaler"]["last_scale"] for p in procs if p["gradscaler"]["last_scale"] is not None), None)}
    scaler["constructed"] = [c for p in procs for c in p["gradscaler"].get("constructed", [])]
    scaler["steps"] = sum(p["gradscaler"].get("steps", 0) for p in procs)
    scaler["updates"] = sum(p["gradscaler"].get("updates", 0) for p in procs)
    syncs = {"total": sum(p["host_syncs"]["total"] for p in procs),
             "frames": sorted((s for p in procs for s in p["host_syncs"]["frames"]), key=lambda s: -s["count"])[:10]}
    params = _merge_counts(p["param_devices"] for p in procs)
    modes = sorted({p["mode"] for p in procs if p.get("mode")})
    limits = sorted({x for p in procs for x in p["limits"]})
    writes = sorted({w for p in procs for w in p["writes_outside"]})
    emulated = dict(emulated)
    if modes:
        emulated["mode"] = modes[0] if len(modes) == 1 else modes
    emulated["limits"] = limits
    return {
        "command_line": list(command),
        "cwd": cwd,
        "project_root": project_root,
        "exit_code": exit_code,
        "interrupted": interrupted,
        "emulated": emulated,
        "processes_seen": len(procs),
        "first_failure": first,
        "fallbacks": list(fallbacks.values()),
        "dtype_findings": list(dtypes.values()),
        "ops_by_class": _merge_counts(p["ops_by_class"] for p in procs),
        "top_ops": dict(list(_merge_counts(p["ops_by_op"] for p in procs).items())[:15]),
        "autocast": list(autocast.values()),
        "gradscaler": scaler,
        "host_syncs": syncs,
        "parameters": parameters_verdict(params, failed=bool(first) or exit_code not in (0, None)),
        "writes_outside": writes,
        "notes": list(notes or []),
        "ranks": [{k: v for k, v in p.items() if k not in ("ops_by_op", "t_start")} for p in procs],
    }


# ----------------------------------------------------------------------------- failure -> rule
def _failure_table() -> list:
    from importlib import resources

    text = resources.files("ascendify.run").joinpath("failures.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["failure"]


def classify(exc_type: Optional[str], message: Optional[str]) -> Optional[dict]:
    """The entry of ``failures.toml`` whose text occurs in ``Type: message``, or None."""
    text = f"{exc_type or ''}: {message or ''}"
    for entry in _failure_table():
        if any(m in text for m in entry["match"]):
            return entry
    return None


def _matches(code: str, prefixes: Iterable[str]) -> bool:
    return any(code.startswith(p) for p in prefixes)


def explain(first: dict, project_root: str, torch_npu: Optional[str], chip: Optional[str]) -> dict:
    """Link the first failure to what the scan of ``project_root`` says about the failing lines.

    The candidates are the scan findings on the lines of the traceback's user frames (innermost
    first), of the rules ``failures.toml`` names for this kind of failure (any rule when the
    failure is of no known kind).  Where the failing line itself has none, the report says so and
    names the nearest finding of those rules above it in the same function, and the rules' fix
    command.  Returns ``{"kind", "why", "rules", "findings": [...], "on_failing_line", "fix_command"}``.
    """
    entry = classify(first.get("type"), first.get("message"))
    prefixes = entry["rules"] if entry else []
    out: dict = {"kind": entry["id"] if entry else None, "why": entry["why"] if entry else None, "rules": prefixes,
                 "findings": [], "on_failing_line": False, "fix_command": None, "scan_error": None}
    frames = [f for f in (first.get("traceback") or []) if f.get("path") and not os.path.isabs(f["path"])]
    uf = first.get("user_frame")
    if uf and uf.get("path") and not os.path.isabs(uf["path"]) and uf not in frames:
        frames.append(uf)
    if not frames:
        return out
    try:
        findings = _scan(project_root, torch_npu, chip)
    except Exception as exc:  # noqa: BLE001 - the report still stands without the link
        out["scan_error"] = f"{type(exc).__name__}: {exc}"
        return out
    by_line: dict = {}
    for f in findings:
        by_line.setdefault((f.path.replace(os.sep, "/"), f.line), []).append(f)
    innermost = frames[-1]

    def fits(f) -> bool:
        return not prefixes or _matches(f.code, prefixes)

    # 1. the failing line itself; 2. the callers' lines (not DEV026, which only points into the callee)
    picked = [f for f in by_line.get((innermost["path"], innermost["line"]), []) if fits(f)]
    out["relation"] = "on the failing line" if picked else None
    if not picked:
        for fr in reversed(frames[:-1]):
            picked = [f for f in by_line.get((fr["path"], fr["line"]), []) if fits(f) and f.code != "DEV026"]
            if picked:
                out["relation"] = f"on the calling line {fr['path']}:{fr['line']}"
                break
    # 3. nothing on the traceback's lines: findings of those rules on a line that assigns a name the
    #    failing line uses (`device = "cuda"`, `--device` default "cuda"), the failing file first
    if not picked and prefixes:
        picked = _assigning(findings, innermost, project_root, fits, {fr["path"] for fr in frames})
        if picked:
            out["relation"] = ("not on the failing line; on earlier lines that set a name it reads: "
                               "the value that fails may come from there")
        out["project_count"] = sum(1 for f in findings if fits(f))
    out["on_failing_line"] = out["relation"] == "on the failing line"
    out["findings"] = [{"code": f.code, "severity": f.severity, "where": f"{f.path}:{f.line}", "message": f.full_message,
                        "fixable": bool(f.fix), "safe": bool(f.fix and f.fix.safe)} for f in picked]
    sel = sorted({f.code for f in picked}) or prefixes
    if sel:
        out["fix_command"] = f"ascendify fix {_shell(project_root)} --select {','.join(sel)}"
    return out


_STOP_NAMES = {"self", "cls", "torch", "nn", "F", "np", "os", "sys", "args", "opt", "opts", "cfg", "config", "to", "cuda",
               "npu", "cpu", "float", "int", "str", "len", "range", "print", "True", "False", "None", "not", "and", "or",
               "in", "is", "if", "else", "for", "return", "lambda", "with", "as", "device_type"}


def _names(code: str) -> set:
    """Identifiers a line of code uses that could carry a device, dtype or backend value."""
    import re

    return {n for n in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code) if n not in _STOP_NAMES and len(n) > 1}


def _assigning(findings: list, frame: dict, root: str, fits, files: "set | None" = None) -> list:
    """Findings (of the rules ``fits`` accepts) whose source line sets one of the names the
    failing line uses: an assignment, a keyword argument, an attribute store, or an argparse
    option of that name; the failing file's lines above the failure first, then other files."""
    import re

    code = frame.get("code") or ""
    m = re.match(r"^\s*[\w.,\s\[\]()*]+?(?<![=!<>])=(?!=)", code)  # `x = f(device)`: the names it reads, not x
    names = _names(code[m.end():] if m else code)
    if not names:
        return []
    alt = "|".join(sorted({re.escape(n) for n in names} | {re.escape(n.replace("_", "-")) for n in names}))
    pat = re.compile(rf"(?:\b|\.)(?:{alt})\s*=(?!=)|['\"]--(?:{alt})['\"]")
    option = re.compile(rf"['\"]--(?:{alt})['\"]")
    cache: dict = {}

    def line_of(f) -> str:
        if f.path not in cache:
            try:
                with open(os.path.join(root, f.path), encoding="utf-8", errors="replace") as fh:
                    cache[f.path] = fh.read().splitlines()
            except OSError:
                cache[f.path] = []
        lines = cache[f.path]
        return lines[f.line - 1] if 0 < f.line <= len(lines) else ""

    here, line = frame["path"], frame.get("line") or 0
    files = set(files or ())

    def sets_a_name(f) -> bool:
        p = f.path.replace(os.sep, "/")
        if p == here:
            return f.line < line and bool(pat.search(line_of(f)))
        # another file: one of the traceback's, or an argparse option of that name (`--device`)
        return bool(pat.search(line_of(f))) if p in files else bool(option.search(line_of(f)))

    hits = [f for f in findings if fits(f) and f.code != "DEV026" and sets_a_name(f)]
    hits.sort(key=lambda f: (f.path.replace(os.sep, "/") != here or f.line > line,
                             (line - f.line) if f.path.replace(os.sep, "/") == here else 0, f.path, f.line))
    return hits[:3]


def _shell(path: str) -> str:
    import shlex

    rel = os.path.relpath(path)
    return shlex.quote(rel if not rel.startswith("..") else path)


def _scan(project_root: str, torch_npu: Optional[str], chip: Optional[str]) -> list:
    """The findings of ``ascendify scan project_root`` (quiet, cached), paths relative to it."""
    from ascendify.options import project_settings
    from ascendify.scan.cli import _run_scan

    settings = project_settings((project_root,), torch_npu=torch_npu, chip=chip, fail_on="never")
    cwd = os.getcwd()
    try:
        os.chdir(project_root)  # findings' paths relative to the project, as the frames are
        result = _run_scan((".",), settings, None, False, 1, quiet=True)
    finally:
        os.chdir(cwd)
    for f in result.findings:
        if f.path.startswith("./"):
            f.path = f.path[2:]
    return result.findings


# ----------------------------------------------------------------------------- text
def _frame_text(fr: Optional[dict]) -> str:
    if not fr:
        return "?"
    fn = f" in {fr['function']}" if fr.get("function") else ""
    return f"{fr.get('path') or fr.get('file')}:{fr.get('line')}{fn}"


def _sites_text(a: dict) -> str:
    sites = a.get("sites") or ([a["user_frame"]] if a.get("user_frame") else [])
    if not sites:
        return "no user frame"
    more = f" and {len(sites) - 3} more site(s)" if len(sites) > 3 else ""
    return ", ".join(_frame_text(f) for f in sites[:3]) + more


def _autocast_text(a: dict) -> str:
    """One autocast group: where it was entered and whether the program or torch turned it off."""
    dev, where = a["device_type"], _sites_text(a)
    if a.get("switched_off"):
        why = ("CUDA is absent on an Ascend host: torch warned 'CUDA is not available ... Disabling autocast'"
               if dev == "cuda" else "a dtype the device does not autocast to")
        return f"AMP requested for {dev} at {where} and switched off ({why})"
    if a["disabled"] or a.get("dtype") is None:
        if a.get("requested") is False:
            return f"{dev} autocast disabled by the program (enabled=False) at {where}"
        return (f"{dev} autocast off at {where} (CUDA is absent on an Ascend host, or the program asked enabled=False)"
                if dev == "cuda" else f"{dev} autocast off at {where} (enabled=False, or a dtype the device does "
                                      "not autocast to)")
    return f"{dev} -> {str(a['dtype']).replace('torch.', '')} at {where}"


def _scaler_text(gs: dict, ac: list) -> Optional[str]:
    """'loss scaling: active (N steps, K skipped)', a scaler torch disabled ('OFF --', a problem), one the
    program built with enabled=False or none at all ('off (...)', the program's choice), or 'no GradScaler'
    where autocast ran in float16 (bf16 needs none); None when neither scaler nor AMP is in sight."""
    built = gs.get("constructed") or []
    on = [c for c in built if c.get("enabled")]
    tail = (f"; {gs.get('backoff', 0)} back-off(s), {gs.get('grow', 0)} growth(s), scale {gs.get('last_scale')}"
            if gs.get("last_scale") is not None else "")
    if on:
        amp_off = (ac and not any(not a["disabled"] and a.get("dtype") for a in ac)
                   and any(a.get("switched_off") for a in ac))
        return (f"loss scaling: active ({gs.get('steps', 0)} step(s), {gs.get('skip', 0)} skipped; "
                f"GradScaler({on[0].get('device_type')!r}) at {_frame_text(on[0].get('user_frame'))}){tail}"
                + (" -- but no autocast was on (switched off above): it scales fp32 training" if amp_off else ""))
    if built:
        c = built[0]
        if not c.get("requested"):  # the program's own choice, not a problem of the port: said as such
            return (f"loss scaling: off (the program chose it: GradScaler({c.get('device_type')!r}, enabled=False) at "
                    f"{_frame_text(c.get('user_frame'))}; its {gs.get('steps', 0)} step(s) ran unscaled)")
        why = ("CUDA is absent on an Ascend host: torch disabled it" if c.get("device_type") == "cuda" else
               "torch disabled it")
        return (f"loss scaling: OFF -- GradScaler({c.get('device_type')!r}) at {_frame_text(c.get('user_frame'))} is "
                f"disabled ({why}); its {gs.get('steps', 0)} step(s) ran unscaled")
    if any(gs.get(k) for k in ("skip", "backoff", "grow")) or gs.get("last_scale") is not None:
        return (f"GradScaler: {gs.get('skip', 0)} step(s) skipped, {gs.get('backoff', 0)} back-off(s), "
                f"{gs.get('grow', 0)} growth(s); scale {gs.get('last_scale')}")
    fp16 = [a for a in ac if not a["disabled"] and a.get("dtype") == "torch.float16"]
    if fp16:
        return (f"loss scaling: no GradScaler (autocast {fp16[0]['device_type']} -> float16 at "
                f"{_sites_text(fp16[0])} trains without a loss scale)")
    if ac and any(a.get("switched_off") for a in ac):  # no float16 autocast ran: nothing to scale
        return "loss scaling: off (the program does not use a GradScaler)"
    return None


def render_text(doc: dict) -> str:
    """The lines ``ascendify run`` prints at the end (on standard error, after the program's output)."""
    lines = []
    emu = doc.get("emulated", {})
    mode = emu.get("mode")
    mode = "/".join(mode) if isinstance(mode, list) else mode
    prog = _shell_join(doc.get("command_display") or doc.get("command_line") or [])
    head = (f"emulated Ascend host: torch_npu {emu.get('torch_npu')}, {emu.get('chip')}, {emu.get('devices')} device(s)"
            + (f", {mode} mode" if mode else "") + (", one RNG stream (--cpu-rng)" if emu.get("cpu_rng") else ""))
    code = doc.get("exit_code")
    lines.append(f"== ascendify run: `{prog}` exited with code {code} ({head})")
    if emu.get("release_note"):
        lines.append(f"   note: {emu['release_note']}")
    n = doc.get("processes_seen", 0)
    if n == 0:
        lines.append("   no Python process of the run loaded the emulator (the command started no Python program, "
                     "or one of another environment)")
    elif n > 1:
        lines.append(f"   {n} processes: " + ", ".join(_label(p) for p in doc.get("ranks", [])))
    first = doc.get("first_failure")
    if first:
        who = f" ({first.get('process')})" if n > 1 else ""
        lines.append(f"first failure{who}: {first.get('type')}: {_one_line(first.get('message'))}")
        uf = first.get("user_frame")
        if uf:
            code_text = (uf.get("code") or "").strip()
            lines.append(f"   at {_frame_text(uf)}" + (f": {code_text}" if code_text else ""))
        user_tb = [f for f in first.get("traceback") or [] if f.get("path") and not os.path.isabs(f["path"])]
        if len(user_tb) > 1:
            lines.append("   called from " + " <- ".join(_frame_text(f) for f in reversed(user_tb[:-1])))
        ex = first.get("explained") or {}
        if ex.get("why"):
            lines.append(f"   why: {ex['why']}")
        if ex.get("findings") and ex.get("relation"):
            lines.append(f"   scan ({ex['relation']}):")
        for f in ex.get("findings", []):
            lines.append(f"     {f['code']} {f['where']}: {_one_line(f['message'], 200)}")
        if ex.get("findings") == [] and ex.get("rules") and not ex.get("scan_error"):
            lines.append(f"   scan: no {'/'.join(ex['rules'])} finding on the traceback's lines or in {(uf or {}).get('path')}")
        if ex.get("project_count"):
            lines.append(f"   the project has {ex['project_count']} {'/'.join(ex['rules'])} finding(s) in all")
        if ex.get("fix_command"):
            lines.append(f"   fix:  {ex['fix_command']}   (prints the diff; --write applies it)")
    elif code not in (0, None) and not doc.get("interrupted"):
        lines.append(f"the program failed (exit {code}) without an uncaught Python exception (sys.exit, a signal, "
                     "or a process that did not load the emulator)")
    for f in doc.get("fallbacks", []):
        where = ", ".join(f["where"]) or "no user frame"
        lines.append(f"CPU fallback: {f['op']}{' (' + f['dtype'] + ')' if f.get('dtype') else ''} reached from {where}"
                     f"{'' if len(f['processes']) < 2 else ' [' + ', '.join(f['processes']) + ']'}")
        if f.get("hint"):
            lines.append(f"   {f['rule']}: {f['hint']}")
    for d in doc.get("dtype_findings", []):
        lines.append(f"dtype: {d['op']} on {d['dtype']} ({d['action']}) reached from {_frame_text(d.get('user_frame'))}")
    ops = doc.get("ops_by_class") or {}
    if ops:
        lines.append(f"ops: {sum(ops.values()):,} dispatched (" + ", ".join(f"{n:,} {_op_class_label(cls)}" for cls, n in ops.items()) + ")")
    ac = doc.get("autocast") or []
    if ac:
        lines.append("autocast: " + "; ".join(_autocast_text(a) for a in ac))
    gs = doc.get("gradscaler") or {}
    scaler = _scaler_text(gs, ac)
    if scaler:
        lines.append(scaler)
    hs = doc.get("host_syncs") or {}
    if hs.get("total"):
        top = ", ".join(f"{s['count']}x at {_frame_text(s.get('user_frame'))}" for s in hs.get("frames", [])[:3])
        lines.append(f"host syncs: {hs['total']} ({top})")
    pv = doc.get("parameters") or {}
    if doc.get("processes_seen") and pv.get("loud"):
        lines.append("!!! " + pv.get("message", "") + " !!!")
    if doc.get("writes_outside"):
        w = doc["writes_outside"]
        lines.append(f"wrote outside its folder ({doc.get('project_root')}): {', '.join(w[:5])}"
                     + (f" and {len(w) - 5} more" if len(w) > 5 else ""))
    extra = _mode_limits(emu.get("limits") or [])
    if extra:
        lines.append(f"not emulated in {mode} mode (see docs/run.md for what no mode emulates): {'; '.join(extra)}")
    for note in doc.get("notes", []):
        lines.append(f"note: {note}")
    lines.append(outcome_line(doc))
    return "\n".join(lines) + "\n"


def outcome_line(doc: dict) -> str:
    """The run in one sentence, the last line of the summary: the exit code (and the first
    failure's exception and user frame), where the model's parameters ended, the CPU fallbacks
    (and dtype findings).  E.g. ``result: exit code 1 (AssertionError at train.py:14); no model
    parameters seen; no CPU fallbacks``."""
    code = doc.get("exit_code")
    first = doc.get("first_failure") or {}
    if doc.get("interrupted"):
        head = f"interrupted (exit code {code})"
    elif code == 0:
        head = "exit code 0 (ran to the end)"
    elif first:
        uf = first.get("user_frame")
        head = f"exit code {code} ({first.get('type')}" + (f" at {uf.get('path')}:{uf.get('line')})" if uf else ")")
    else:
        head = f"exit code {code} (no uncaught Python exception)"
    parts = [head]
    if doc.get("processes_seen"):
        pv = doc.get("parameters") or {}
        where = pv.get("on")
        devs = _human_devices(pv.get("devices") or {})
        if where is None:
            parts.append("no model parameters seen")
        elif where == "npu":
            parts.append(f"parameters ended on the NPU ({devs})")
        elif where == "cpu":
            parts.append(f"parameters ended on the CPU, not the NPU ({devs})" if pv.get("loud")
                         else f"parameters still on the CPU when it stopped ({devs})")
        else:
            parts.append(f"parameters split between devices ({devs})")
        fb = doc.get("fallbacks") or []
        parts.append(f"{len(fb)} op(s) fell back to the CPU" if fb else "no CPU fallbacks")
        dt = doc.get("dtype_findings") or []
        if dt:
            parts.append(f"{len(dt)} dtype finding(s)")
    return "result: " + "; ".join(parts)


def _shell_join(argv: list) -> str:
    """The command as a shell would take it back (``python -c 'import torch; ...'``)."""
    import shlex

    return " ".join(shlex.quote(str(a)) for a in argv)


def _op_class_label(cls: str) -> str:
    try:
        from ascendify.kb.ops import SHORT_LABELS
    except ImportError:  # pragma: no cover -- the KB ships with ascendify
        return cls
    return SHORT_LABELS.get(cls, cls)


def _mode_limits(limits: list) -> list:
    """The limits of the mode used beyond those every mode has (``boot.limits``)."""
    try:
        from ascendify.run.boot import limits as all_limits

        common = set(all_limits("shim"))
    except ImportError:
        common = set()
    return [x for x in limits if x not in common]


def _one_line(text: Optional[str], limit: int = 300) -> str:
    t = " ".join(str(text or "").split())
    return t if len(t) <= limit else t[:limit - 1] + "…"
