"""Assemble ``report.json``: scan findings, applied fixes, plan, and other tools' results.

Schema (``"schema": "ascendify-report/1"``) is documented in ``docs/report.md``.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import json
import os
import sys
from importlib import resources
from typing import Any, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ascendify import __version__
from ascendify.config import Settings
from ascendify.fix.run import FixRun
from ascendify.output.summary import fix_state, settled_by_plan, summarize
from ascendify.rules.registry import load_rules
from ascendify.scan.engine import ScanResult
from ascendify.diagnostics import Finding

SCHEMA = "ascendify-report/1"
SECTIONS = ("doctor", "probe", "diagnose", "profile", "compare", "export", "fit")


def load_plan() -> list[dict]:
    """The ordered migration steps from ``report/plan.toml``."""
    text = resources.files("ascendify.report").joinpath("plan.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["step"]


class LineDiff:
    """Line-level mapping from an old text to a new one, for per-finding diffs."""

    def __init__(self, old: str, new: str):
        self.a = old.splitlines()
        self.b = new.splitlines()
        self.changed: dict[int, list[str]] = {}  # old line (1-based) -> new lines replacing it
        self.inserted: list[tuple[int, list[str]]] = []  # (after old line, new lines)
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, self.a, self.b, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            if tag == "insert":
                self.inserted.append((i1, self.b[j1:j2]))
            elif tag == "replace" and i2 - i1 == j2 - j1:
                for k in range(i2 - i1):
                    self.changed[i1 + k + 1] = [self.b[j1 + k]]
            else:  # delete, or replace of unequal length: attribute the new block to the first old line
                self.changed[i1 + 1] = self.b[j1:j2]
                for k in range(i1 + 2, i2 + 1):
                    self.changed[k] = []

    def for_lines(self, first: int, last: int, with_imports: bool) -> Optional[str]:
        out = []
        for n in range(first, last + 1):
            if n in self.changed:
                out.append("-" + self.a[n - 1])
                out += ["+" + x for x in self.changed[n]]
        if with_imports:
            for after, lines in self.inserted:
                if any(x.strip().startswith(("import torch_npu", "DEVICE_TYPE =", "import torch")) for x in lines):
                    out += [f"+{x}" for x in lines if x.strip()] + [f"  (added after line {after})"]
        return "\n".join(out) or None


def build_report(
    project: str,
    result: ScanResult,
    fixrun: Optional[FixRun],
    settings: Settings,
    sections: Optional[dict[str, Any]] = None,
    migrated_dir: Optional[str] = None,
) -> dict[str, Any]:
    """The report document (a JSON-serialisable dict) for one project.

    ``sections`` maps a section name (doctor, probe, diagnose, profile, …) to
    that tool's JSON result, or to ``{"status": "not run", "reason": …}``.
    """
    rules = load_rules()
    applied = fixrun is not None  # a migrate report: the fixes went into the migrated copy; else the plan
    fixed_ids = fixrun.fixed_ids if fixrun else None
    diffs = {rel: LineDiff(old, new) for rel, (old, new) in (fixrun.texts.items() if fixrun else [])}
    findings = []
    import_shown: set = set()
    settled = settled_by_plan(result.findings, settings.unsafe_fixes)  # call sites that go with their helpers' fixes
    for f in result.findings:
        d = f.to_dict()
        d["fix_state"] = fix_state(f, settings.unsafe_fixes, fixed_ids, settled)
        d["fixed"] = d["fix_state"] == "fixed"  # with fixes_applied False: what `ascendify fix` would fix
        d["rule_page"] = f"rules/{f.code}.html"
        d["diff"] = None
        if applied and d["fixed"] and f.path in diffs:
            adds = bool(f.fix and any(e.kind in ("add_import", "add_prelude") for e in f.fix.edits)) and f.path not in import_shown
            if adds:
                import_shown.add(f.path)  # the added import is shown once per file, with its first finding
            d["diff"] = diffs[f.path].for_lines(f.line, f.end_line, adds)
        d["where"] = f"{f.path}:cell {f.cell}:{f.cell_line}" if f.cell else f"{f.path}:{f.line}"
        findings.append(d)
    summary = summarize(result.findings, result.files, result.lines, settings.unsafe_fixes, fixed_ids)
    if fixrun is not None and fixrun.counts:  # what needs a person: the final state of the migrated copy
        summary.update({k: fixrun.counts[k] for k in ("open", "unsafe", "manual", "settled", "new") if k in fixrun.counts})
        summary["fixed_text"] = fixrun.counts.get("text", summary["fixed_text"])
    for i, fdoc in enumerate(summary["files"]):
        fdoc["page"] = f"files/{i}.html"
    plan = []
    steps = load_plan()
    step_of = {}
    for d in findings:
        for n, step in enumerate(steps, 1):
            if any(d["code"].startswith(p) for p in step.get("codes", [])):
                step_of[id(d)] = n
                break
    for d in findings:
        d["step"] = step_of.get(id(d))
    for n, step in enumerate(steps, 1):
        mine = [d for d in findings if d["step"] == n]
        command = step.get("command", "").replace("PROJECT", project)
        extra = step.get("command_migrated" if applied else "command_scan", "").replace("PROJECT", project)
        plan.append({
            "step": n,
            "title": step["title"],
            "why": step["why"],
            "command": command,
            "command_note": extra,  # migrate: the fixes were written; scan-only: nothing was changed
            "note": "",
            "codes": sorted({d["code"] for d in mine}),
            "findings": len(mine),
            "fixed": sum(1 for d in mine if d["fixed"]),
            "settled": sum(1 for d in mine if d["fix_state"] == "settled"),
            "open": sum(1 for d in mine if not d["fixed"] and d["fix_state"] != "settled"),
            "severe_open": sum(1 for d in mine if not d["fixed"] and d["fix_state"] != "settled" and d["severity"] in ("error", "silent")),
        })
        st = plan[-1]
        # todo: error/silent findings open; review: only warnings/info open; done: all fixed (by the
        # run, or — without one — by `ascendify fix`); unknown: the scan has nothing to say (the step
        # needs a run on the NPU host)
        st["status"] = "todo" if st["severe_open"] else "review" if st["open"] else "done" if st["findings"] else "unknown"
    _environment_status(plan[0], (sections or {}).get("doctor"))
    used_rules = sorted({d["code"] for d in findings})
    return {
        "schema": SCHEMA,
        "tool": {"name": "ascendify", "version": __version__},
        "generated": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "project": {"path": project, "name": os.path.basename(os.path.abspath(project)) or project, "migrated_copy": migrated_dir},
        "fixes_applied": applied,
        "kind": "migrate" if applied else "scan",
        "settings": {"target": settings.target, "torch_npu": settings.torch_npu,
                     "torch_npu_reason": getattr(settings, "torch_npu_reason", ""), "chip": settings.chip,
                     "select": settings.select, "ignore": settings.ignore, "unsafe_fixes": settings.unsafe_fixes},
        "summary": summary,
        "plan": plan,
        "findings": findings,
        "changes": fixrun.changes if fixrun else [],
        "rules": {c: {"name": rules[c].name, "severity": rules[c].severity, "category": rules[c].category,
                      "summary": rules[c].summary, "fixable": rules[c].fixable} for c in used_rules},
        "sections": sections or {},
    }


def _environment_status(step: dict, doctor: Any) -> None:
    """Step 1 (environment) is judged by ``ascendify doctor``'s result, not by the scan."""
    step["note"] = ""
    if not isinstance(doctor, dict) or doctor.get("status") == "not run" or "checks" not in doctor:
        why = doctor.get("reason") if isinstance(doctor, dict) and doctor.get("reason") else "doctor did not run"
        step["note"] = (f"{why}; run `ascendify doctor --format json -o doctor.json` on the Ascend host and add it with "
                        "`ascendify report --include doctor.json`")
        return
    fails = [c for c in doctor["checks"] if c.get("status") == "fail"]
    warns = [c for c in doctor["checks"] if c.get("status") == "warn"]
    if not doctor.get("stack_present", True):
        step["note"] = "no Ascend stack on the machine that ran the report; run `ascendify doctor` on the NPU host"
        step["status"] = "unknown"
    elif fails:
        step["status"] = "todo"
        step["note"] = "doctor: " + "; ".join(f"{c.get('title') or c.get('id')}: {c.get('found')}" for c in fails[:3])
    elif warns:
        step["status"] = "review"
        step["note"] = f"doctor: {len(warns)} warning(s)"
    else:
        step["status"] = "done"
        step["note"] = "doctor: every check passed"


def recognise(data: Any) -> Optional[str]:
    """The section a command's JSON result belongs to, from its content (schema marker, or the
    keys that command always writes), or None when no ascendify command writes such a document.

    doctor (``"schema": "ascendify.doctor/…"``), scan / fix / migrate / baseline (``"tool":
    "ascendify"`` with ``"command"``, or scan's findings + summary.files_scanned), diagnose
    (findings with evidence + summary.root_cause), probe (classification + ops + verdict), profile
    (kernels + step_time), profile-compare (gpu_trace + npu_trace), compare (verdict + thresholds
    + rows), export (onnx + atc_command), fit (peak_bytes + fits), report (``ascendify-report/…``).
    """
    if not isinstance(data, dict):
        return None
    schema = str(data.get("schema", ""))
    if schema.startswith("ascendify.doctor/") or {"checks", "stack_present"} <= data.keys():
        return "doctor"
    if schema.startswith("ascendify-report/"):
        return "report"
    if data.get("tool") == "ascendify" and isinstance(data.get("command"), str):
        # subcommands name their section: `profile analyze` is the profile section
        return {"profile analyze": "profile", "profile compare": "profile-compare"}.get(data["command"], data["command"])
    keys = data.keys()
    summ = data.get("summary") if isinstance(data.get("summary"), dict) else {}
    if {"findings", "summary"} <= keys and "files_scanned" in summ:
        return "scan"
    if {"findings", "summary"} <= keys and ("root_cause" in summ or "first_error" in summ):
        return "diagnose"
    if {"classification", "ops", "verdict"} <= keys:
        return "probe"
    if {"gpu_trace", "npu_trace"} <= keys:
        return "profile-compare"
    if {"kernels", "step_time"} <= keys:
        return "profile"
    if {"verdict", "thresholds", "rows"} <= keys:
        return "compare"
    if {"onnx", "atc_command"} <= keys:
        return "export"
    if {"peak_bytes", "fits"} <= keys:
        return "fit"
    if isinstance(data.get("command"), str) and data["command"] in SECTIONS:  # older results named themselves
        return data["command"]
    return None


def load_section_file(path: str) -> tuple[Optional[str], Any]:
    """Read another command's JSON output (``--include``) and recognise it by its content
    (:func:`recognise`; the file name plays no part).

    Returns ``(section name or None, data)``: None when no ascendify command writes such a
    document (the caller warns and leaves it out).  Raises ``ValueError`` with a one-line
    message for unreadable or non-JSON files.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror})")
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg} at line {exc.lineno}); pass the file written by --format json")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text; pass the file written by --format json")
    return recognise(data), data


def add_sections(doc: dict[str, Any], sections: dict[str, Any]) -> None:
    """Add ``sections`` to a report document and judge step 1 again from a doctor result among them."""
    doc.setdefault("sections", {}).update(sections)
    if "doctor" in sections and doc.get("plan"):
        _environment_status(doc["plan"][0], doc["sections"]["doctor"])
