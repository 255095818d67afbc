"""Scan summary: counts per file, category and severity, share auto-fixable, effort per file."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from ascendify.scan.finding import SEVERITIES, Finding

EFFORTS = ("none", "low", "medium", "high")


def file_effort(findings: list[Finding]) -> tuple[str, str]:
    """(effort, reasoning) for one file's findings.

    none: nothing to change.  low: every finding has a safe automatic fix, or
    what remains is a few info/warning findings or fixes needing ``--unsafe-fixes``.  medium: up to 5 error/silent findings
    need a person, or many warnings.  high: more than 5 error/silent findings
    need a person, a parse error, or third-party CUDA code (kernels, CUDA-only
    libraries) that has to be replaced.
    """
    if not findings:
        return "none", "no findings"

    def count(k: int, one: str, many: str) -> str:
        return f"{k} {one if k == 1 else many}"

    n = len(findings)
    safe = [f for f in findings if f.fix is not None and f.fix.safe]
    unsafe = [f for f in findings if f.fix is not None and not f.fix.safe]
    manual = [f for f in findings if f.fix is None]
    manual_severe = [f for f in manual if f.severity in ("error", "silent")]
    ext = [f for f in manual if f.category == "parse" or (f.category == "third-party" and f.severity in ("error", "silent"))]
    head = f"{count(n, 'finding', 'findings')}, {len(safe)} fixed safely by `ascendify fix`"
    if unsafe:
        head += f", {len(unsafe)} more with `--unsafe-fixes`"
    if ext:
        codes = sorted({f.code for f in ext})
        return "high", f"{head}; {count(len(ext), 'needs', 'need')} CUDA-only code replaced or the file repaired ({', '.join(codes)})"
    if len(manual_severe) > 5:
        return "high", f"{head}; {len(manual_severe)} error/silent findings need manual changes"
    if manual_severe:
        return "medium", f"{head}; {count(len(manual_severe), 'error/silent finding needs', 'error/silent findings need')} manual changes"
    if len(manual) > 5:
        return "medium", f"{head}; {len(manual)} warning/info findings to review by hand"
    if manual or unsafe:
        rest = len(manual) + len(unsafe)
        return "low", f"{head}; {count(rest, 'finding', 'findings')} to review"
    return "low", f"{head}; nothing left for a person"


def summarize(findings: list[Finding], files: list[str], lines: dict | None = None) -> dict[str, Any]:
    """The summary dict shared by text and JSON output (schema in docs/output.md)."""
    per_file: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        per_file[f.path].append(f)
    by_sev = Counter(f.severity for f in findings)
    by_cat = Counter(f.category for f in findings)
    by_code = Counter(f.code for f in findings)
    fixable = sum(1 for f in findings if f.fix is not None)
    safe = sum(1 for f in findings if f.fix is not None and f.fix.safe)
    files_out = []
    for path in sorted(set(files) | set(per_file)):
        fs = per_file.get(path, [])
        effort, why = file_effort(fs)
        files_out.append(
            {
                "path": path,
                "lines": (lines or {}).get(path),
                "findings": len(fs),
                "fixable": sum(1 for f in fs if f.fix is not None),
                "by_severity": {s: c for s, c in Counter(f.severity for f in fs).items()},
                "effort": effort,
                "effort_reason": why,
            }
        )
    return {
        "files_scanned": len(files),
        "lines_scanned": sum((lines or {}).values()),
        "findings": len(findings),
        "fixable": fixable,
        "fixable_safe": safe,
        "fixable_share": round(fixable / len(findings), 3) if findings else 0.0,
        "by_severity": {s: by_sev.get(s, 0) for s in reversed(SEVERITIES)},
        "by_category": dict(sorted(by_cat.items())),
        "by_code": dict(sorted(by_code.items())),
        "effort": dict(Counter(f["effort"] for f in files_out)),
        "files": files_out,
    }
