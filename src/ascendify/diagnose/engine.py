"""Turn matched log lines into ranked findings.

Ranking (first = most likely root cause): errors before warnings; within
errors, *causes* (a specific reason: OOM, undefined symbol, AI Core exception)
before *consequences* (a rank that timed out waiting, a stream-sync timeout)
before *wrappers* (generic carriers such as ``EZ9999``, ``ERR00100``); within
each group the first occurrence in time (plog / torch_npu / ISO timestamps),
then the order in which the files and lines were read.  The research notes'
heuristic (``accuracy-profiling-atc.md`` §5.6): find the first ``[ERROR]`` in
time across all ranks; 9999 codes are wrappers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from ascendify.diagnose import oom as oom_mod
from ascendify.diagnose.scanner import (
    FileStats,
    Hit,
    Scanner,
    expand_inputs,
    open_input,
    rank_from_path,
)
from ascendify.diagnose.signatures import KnowledgeBase, Matcher, Signature, load
from ascendify.errors import AscendifyError

EVIDENCE_MAX = 5
KEYS_PER_SIGNATURE = 50
"""Distinct keys (op names, symbols…) kept per signature; more are counted under ``(other)``."""
ROLE_ORDER = {"cause": 0, "consequence": 1, "wrapper": 2}
SEV_ORDER = {"error": 0, "warning": 1}

_ACL_CLASS = {"1": "parameter / usage error", "2": "resource error", "3": "storage / sub-health error", "5": "internal error"}
_ACL_COMPONENT = {"00": "ACL", "48": "ACL", "07": "runtime", "45": "GE", "61": "aclnn"}


@dataclass
class Evidence:
    file: str
    line: int
    rank: Optional[int]
    time: Optional[float]
    text: str

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "rank": self.rank, "time": _iso(self.time), "text": self.text}


@dataclass
class Finding:
    """One diagnosed problem; ``count`` lines across ``ranks`` said it."""

    id: str
    family: str
    title: str
    severity: str
    role: str
    cause: str
    fix: str
    next_step: str
    source: str
    key: str = ""
    rules: tuple = ()
    verified: bool = True
    count: int = 0
    ranks: set = field(default_factory=set)
    first_time: Optional[float] = None
    first_seq: int = 0
    evidence: list = field(default_factory=list)
    frame: Optional[dict] = None
    details: dict = field(default_factory=dict)
    consequence_of: str = ""

    def add(self, hit: Hit) -> None:
        self.count += 1
        if hit.rank is not None:
            self.ranks.add(hit.rank)
        if self.count == 1:
            self.first_seq = hit.seq
        if hit.time is not None and (self.first_time is None or hit.time < self.first_time):
            self.first_time = hit.time
        new_rank = hit.rank is not None and all(e.rank != hit.rank for e in self.evidence)
        if len(self.evidence) < 3 or (new_rank and len(self.evidence) < EVIDENCE_MAX):
            self.evidence.append(Evidence(hit.file, hit.line, hit.rank, hit.time, hit.text))
        if self.frame is None and hit.frame is not None:
            self.frame = {"path": hit.frame.path, "line": hit.frame.line, "function": hit.frame.function}

    def sort_key(self) -> tuple:
        t = self.first_time if self.first_time is not None else float("inf")
        return (SEV_ORDER[self.severity], ROLE_ORDER[self.role], t, self.first_seq)

    def to_dict(self) -> dict:
        from ascendify.diagnose.rules import rule_info

        return {
            "id": self.id, "family": self.family, "title": self.title, "severity": self.severity, "role": self.role,
            "key": self.key or None, "count": self.count, "ranks": sorted(self.ranks),
            "first_time": _iso(self.first_time), "evidence": [e.to_dict() for e in self.evidence],
            "python_frame": self.frame, "cause": self.cause, "fix": self.fix, "next_step": self.next_step,
            "details": self.details, "scan_rules": rule_info(self.rules), "consequence_of": self.consequence_of or None,
            "source": self.source, "verified": self.verified,
        }


def _iso(t: Optional[float]) -> Optional[str]:
    if t is None:
        return None
    return datetime.fromtimestamp(t).isoformat(timespec="microseconds")


@dataclass
class Report:
    findings: list
    files: list  # FileStats
    notes: list

    @property
    def errors(self) -> list:
        return [f for f in self.findings if f.severity == "error"]

    def first_error(self) -> Optional[Finding]:
        errs = self.errors
        if not errs:
            return None
        return min(errs, key=lambda f: (f.first_time if f.first_time is not None else float("inf"), f.first_seq))

    def to_dict(self) -> dict:
        fe = self.first_error()
        return {
            "summary": {
                "findings": len(self.findings),
                "errors": len(self.errors),
                "warnings": len(self.findings) - len(self.errors),
                "files": len(self.files),
                "lines": sum(s.lines for s in self.files),
                "bytes": sum(s.bytes for s in self.files),
                "root_cause": self.findings[0].id if self.findings and self.findings[0].severity == "error" else None,
                "first_error": None if fe is None else fe.evidence[0].to_dict(),
            },
            "findings": [dict(f.to_dict(), order=i + 1) for i, f in enumerate(self.findings)],
            "files": [{"path": s.path, "lines": s.lines, "bytes": s.bytes, "matched_lines": s.hits, "skipped": s.skipped or None} for s in self.files],
            "notes": self.notes,
        }


class Aggregator:
    """Collect hits into findings with bounded memory."""

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self.findings: dict = {}
        self.keys_per_sig: dict = {}

    def _get(self, fid: str, make) -> Finding:
        f = self.findings.get(fid)
        if f is None:
            f = self.findings[fid] = make()
        return f

    def add(self, hit: Hit) -> None:
        m = hit.match
        for sig, groups in m.signatures:
            self._add_signature(sig, groups, hit)
        for code in m.cann_codes:
            self._add_cann(code, hit)
        for code in m.acl_codes:
            self._add_acl(code, hit)
        for ss, ccc, word in m.err_codes:
            self._add_err(ss, ccc, hit)

    def _add_signature(self, sig: Signature, groups: dict, hit: Hit) -> None:
        key = groups.get(sig.key, "") if sig.key else ""
        if key:
            seen = self.keys_per_sig.setdefault(sig.id, set())
            if key not in seen and len(seen) >= KEYS_PER_SIGNATURE:
                key = "(other)"
            else:
                seen.add(key)
        fid = f"{sig.id}:{key}" if key else sig.id

        def make() -> Finding:
            fill = key or "this operator"
            return Finding(
                id=sig.id, family=sig.family, title=sig.title + (f": {key}" if key else ""), severity=sig.severity,
                role=sig.role, cause=sig.cause.replace("{key}", fill), fix=sig.fix.replace("{key}", fill),
                next_step=sig.next_step.replace("{key}", fill), source=sig.source, key=key, rules=sig.rules_for(key),
                verified=sig.verified,
            )

        f = self._get(fid, make)
        first = f.count == 0
        f.add(hit)
        extra = {k: v for k, v in groups.items() if k != sig.key}
        if first and extra:
            f.details.update(extra)
        if sig.handler == "oom" and "verdict" not in f.details:
            nums = oom_mod.parse(hit.text)
            if nums is not None:
                f.details.update({k: round(v, 2) if isinstance(v, float) else v for k, v in nums.items()})
                f.details["unit"] = "MiB"
                f.details.update(oom_mod.judge(nums))
                f.cause = f"NPU out of memory: {f.details['verdict']}."
                f.fix = f.details["advice"]

    def _add_cann(self, code: str, hit: Hit) -> None:
        title, role, fix = self.kb.cann_code(code)
        module = self.kb.cann_modules.get(code[1], "unknown module")

        def make() -> Finding:
            inner = role == "wrapper"
            return Finding(
                id=f"cann-{code}", family="cann-code", title=f"{code}: {title}", severity="error", role=role,
                cause=(f"CANN {module} reported {code} ({title})."
                       + (" Codes ending in 9999 are inner errors that wrap an earlier, more specific error." if inner else "")),
                fix=fix or "Read the message text after the code; it names the op, argument or resource.",
                next_step="Find the first [ERROR] line in time in the plogs ($HOME/ascend/log/debug/plog/plog-<pid>_<time>.log, "
                          "or ASCEND_PROCESS_LOG_PATH) of all ranks; rerun with ASCEND_LAUNCH_BLOCKING=1 for an accurate stack.",
                source="accuracy-profiling-atc.md §5.1 (code structure, module letters), §5.2 and §1.6 (code table)", key=code,
            )

        self._get(f"cann-{code}", make).add(hit)

    def _add_acl(self, code: int, hit: Hit) -> None:
        known = self.kb.acl_code(code)
        s = str(code)
        if known:
            title, role = known
        else:
            title = f"{_ACL_CLASS.get(s[0], 'unknown class')} in {_ACL_COMPONENT.get(s[1:3], 'component ' + s[1:3])}"
            role = "wrapper" if s[0] == "5" else "cause"

        def make() -> Finding:
            return Finding(
                id=f"acl-{code}", family="acl-code", title=f"ACL error code {code}: {title}", severity="error", role=role,
                cause=f"An ACL / runtime / aclnn call returned {code} ({title}).",
                fix="Read the CANN message printed with it (E-code lines) for the specific reason.",
                next_step="Rerun with ASCEND_LAUNCH_BLOCKING=1 (errors are asynchronous) and read the plog.",
                source="accuracy-profiling-atc.md §5.3 (numeric aclError / aclnn codes)", key=s,
            )

        self._get(f"acl-{code}", make).add(hit)

    def _add_err(self, ss: str, ccc: str, hit: Hit) -> None:
        sub = self.kb.torch_npu_submodules.get(ss, f"submodule {ss}")
        what = self.kb.torch_npu_codes.get(ccc, f"code {ccc}")
        code = f"ERR{ss}{ccc}"
        hccl = ccc == "200" or sub == "DIST"

        def make() -> Finding:
            return Finding(
                id=f"torch-npu-{code}", family="torch-npu-code", title=f"{code} {sub} {what}", severity="error",
                role="wrapper",
                cause=(f"torch_npu's {sub} layer reports '{what}'. This is the torch_npu wrapper of the error; the CANN "
                       "code and message printed with it (E-codes, 'error code is N') carry the reason."),
                fix=("Fix the collective error on the rank that failed first (see the HCCL findings)." if hccl
                     else "Fix the error reported with it (the E-code / ACL code findings)."),
                next_step="Rerun with ASCEND_LAUNCH_BLOCKING=1; the plog holds the CANN side of the error.",
                source="accuracy-profiling-atc.md §5.4 (torch_npu error suffix `ERR<SS><CCC>`)", key=code,
            )

        self._get(f"torch-npu-{code}", make).add(hit)

    def result(self) -> list:
        out = sorted(self.findings.values(), key=Finding.sort_key)
        causes = [f for f in out if f.severity == "error" and f.role == "cause"]
        if causes:
            root = causes[0]
            for f in out:
                if f.severity != "error" or f.role == "cause":
                    continue
                if root.first_time is None or f.first_time is None or root.first_time <= f.first_time:
                    f.consequence_of = root.id + (f":{root.key}" if root.key and not root.id.endswith(root.key) else "")
        return out


def diagnose(paths: tuple, kb: Optional[KnowledgeBase] = None) -> Report:
    """Diagnose log files / folders / ``-``.  Raises ``AscendifyError`` for a
    missing path; unreadable or binary files become notes."""
    kb = kb or load()
    files, notes = expand_inputs(paths)
    scanner = Scanner(Matcher(kb))
    agg = Aggregator(kb)
    stats_all = []
    for path in files:
        name = "<stdin>" if path == "-" else path
        stats = FileStats(name)
        stats_all.append(stats)
        try:
            fh = open_input(path)
        except OSError as exc:
            notes.append(f"{name}: cannot read ({exc.strerror or exc}); skipped")
            stats.skipped = "unreadable"
            continue
        try:
            for hit in scanner.scan_stream(fh, name, stats, rank_from_path(os.path.relpath(path)) if path != "-" else None):
                agg.add(hit)
        except (OSError, EOFError) as exc:
            notes.append(f"{name}: read error after {stats.bytes} bytes ({exc}); partial results")
        finally:
            if path != "-":
                fh.close()
        if stats.skipped:
            notes.append(f"{name}: {stats.skipped}; skipped (expected a text log)")
        elif stats.bytes == 0:
            notes.append(f"{name}: empty file")
    if files and all(s.skipped or s.bytes == 0 for s in stats_all) and not agg.findings:
        notes.append("no readable log text in the inputs")
    if not files:
        raise AscendifyError("no log files found in " + ", ".join(paths) + " (expected *.log files, rank log folders, plog folders or '-')")
    return Report(agg.result(), stats_all, notes)
