"""Turn matched log lines into ranked findings.

* **Blocks**: matched lines of one file and rank at most ``BLOCK_GAP`` lines
  apart are one error block (a CANN ``[ERROR]`` line, its ``EZ…`` continuation,
  the torch_npu ``ERR…`` suffix, the Python exception line); the generic codes
  of a block with a specific finding are folded into it (``wrapped_codes``).
* **Exceptions**: a traceback's exception line gives its finding the type,
  message and user frame; an exception no catalogue entry explains becomes a
  ``python-exception`` finding; in a chain of exceptions the first one a
  catalogue entry explains (else the first printed) is the cause, the later
  ones its consequences.
* **Metric symptoms** (:mod:`.metrics`) become ``metric-<id>`` findings.
* **Ranking** (first = most likely root cause): errors before warnings; within
  errors, *causes* before *consequences* (a rank that timed out waiting) before
  *wrappers* (``EZ9999``, ``ERR00100``); catalogued causes before unexplained
  Python exceptions; then the first occurrence in time, then reading order
  (research notes ``accuracy-profiling-atc.md`` §5.6: the first ``[ERROR]`` in
  time across all ranks; 9999 codes are wrappers).  *Generic readings yield*: in an
  error block with a specific cause (a message entry, a catalogued code), the block's
  generic causes (entries with ``priority < 0`` such as EZ1001 "aclnn parameter error",
  EE1001 "argument is invalid", ACL 507033; codes no entry catalogues) are folded into
  it like wrapper codes, so the specific message is named first.
* **Timeline**: a consequence / wrapper is linked to the latest cause at or
  before it in time (same rank first for a wrapper); causes are never made
  consequences of each other, so an unrelated failure on another rank keeps its
  own place.
* **Context** (:mod:`.context`): chip / version facts add fix sentences and a
  ``stack-version-mismatch`` warning; :func:`confidence` scores each finding.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
import re
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from ascendify.diagnose import components as components_mod
from ascendify.diagnose import frameworks as fw_mod
from ascendify.diagnose import known_issues as ki_mod
from ascendify.diagnose import metrics as metrics_mod
from ascendify.diagnose import oom as oom_mod
from ascendify.diagnose import structure
from ascendify.diagnose import reason as reason_mod
from ascendify.diagnose.context import Context, advice_for
from ascendify.diagnose.scanner import (
    FileStats,
    Hit,
    Scanner,
    expand_inputs,
    _ts,
    open_input,
    rank_from_path,
)
from ascendify.diagnose.signatures import KnowledgeBase, Matcher, Signature, load
from ascendify.diagnose.structure import PyFrame, is_user_frame
from ascendify.errors import AscendifyError

EVIDENCE_MAX = 5
KEYS_PER_SIGNATURE = 50
"""Distinct keys (op names, symbols…) kept per signature; more are counted under ``(other)``."""
ROLE_ORDER = {"cause": 0, "consequence": 1, "wrapper": 2}
BLOCK_GAP = 6
"""Matched lines of one file and rank at most this many lines apart form one error block
(a CANN ``[ERROR]`` line, its ``EZ…``/``The Inner error`` continuation lines, the
torch_npu ``ERR…`` suffix and the Python exception line printed with it)."""
BLOCK_MAX = 256
MAX_CHAINS = 10000
"""Exception chains remembered for the chain rule (more are not linked)."""
LAUNCHER_EXCEPTIONS = ("ChildFailedError",)
"""torch.distributed.elastic reports that a worker failed: a consequence of that worker's error."""
SEV_ORDER = {"error": 0, "warning": 1}
QUERY_HEAD = 64
QUERY_TAIL = 192
"""Matched lines kept (first and last, 400 chars each) for matching known issues against the whole log."""
_GENERIC_TOKENS = frozenset("runtime error exception traceback failed fail warning info raise raised value type key os "
                            "assertion import module attribute b kb kib mb mib gb gib tb tib byte bytes".split())
"""Words of any Python error line (exception class parts, size units: an OOM line in MiB is the same message as one
in GiB): never the specific part of a known issue's match."""
SALIENT_KEEP = 32
TPOT_STEP = 1.8
_BENCH_CONC = re.compile(r"(?:Maximum request concurrency|request concurrency)\s*:?\s+([0-9]+(?:\.[0-9]+)?)")
_BENCH_TPOT = re.compile(r"Mean TPOT \(ms\)\s*:?\s+([0-9]+(?:\.[0-9]+)?)")
VERSION_DRIFT = ("python-call-signature-mismatch", "python-module-attribute-missing")
"""Catalogue entries that read a version pairing: raised inside a framework's code, the fix names that framework."""
PASTE_CONFIDENCE = 0.6
"""A short paste with no error-looking line names the known issue its lines match at this confidence or more (a
whole quoted line that reads as no error scores ``known_issues.NOISE_WEIGHT``); below ``CLOSE_CONFIDENCE`` as a
warning, "closest known issue"."""
_FRAME_LINE = re.compile(r'^\s*File "[^"]*", line \d+')
_LOUD = re.compile(r"\[ERROR\]|\bERROR\b|\b[Ff]ailed\b|FAILED|disappeared|not supported|core dumped|Segmentation fault|"
                   r"\bKilled\b|\bAborted\b|\b[Vv]alue error\b|No matching distribution|"
                   r"^\s*\{\s*\"(?:error|detail|message)\"\s*:\s*[\"{]")
"""An error-looking line loud enough to stand as a log's only finding (a log level, "failed", a crash, a server's JSON
error reply ``{"error": "..."}``); prose that merely contains "Error:" does not."""
KI_FINDINGS = 6
LOG_CODES_MAX = 64
REASON_SHARED = 2
"""Distinctive words of a finding's own reason a known issue must share to be attached to it."""
"""Distinct error codes remembered per diagnosis (the known-issue code agreement)."""
"""Error findings (first in ranking) matched against the known issues, each by its own evidence."""
_REASON_STOP = frozenset("must should not check please but got only which this that with when the and for are is be "
                         "in of to op support supported".split())
"""Words of any reason sentence (the rule's wording, not its subject): not what makes a thread about this reason."""

_CODE_SHAPE = re.compile(r"E[0-9A-Z][0-9]{4}|ERR[0-9]{5}|[1-5][0-9]{5}")
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
    generic: bool = False  # a Python exception no catalogue entry explains
    base_confidence: float = 0.5
    confidence: float = 0.0
    exception: Optional[dict] = None
    reason: str = ""  # the message's own reason text (CANN `Reason:` / continuation lines, the exception's message)
    known_issue: Optional[dict] = None  # the known issue matched (known_issues.Match.to_dict() + "fix_note")
    settings: list = field(default_factory=list)  # ids of the framework settings added to the fix (frameworks.toml)
    variant: str = ""  # the word of another log line that chose this entry's variant reading (signature variants)
    incident: int = 0  # the incident (1, 2, ...) of a report whose inputs hold separate incidents; 0: only one

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
        if hit.frame is not None and (self.frame is None or (hit.exc is not None and self.exception is None)):
            self.frame = {"path": hit.frame.path, "line": hit.frame.line, "function": hit.frame.function}
        if hit.exc is not None and self.exception is None:
            self.exception = {"type": hit.exc.type, "message": hit.exc.message[:500]}
        if hit.exc is not None and hit.exc.component is not None and "component" not in self.details:
            comp, fr = hit.exc.component
            self.details["component"] = {"id": comp.id, "project": comp.project, "feature": comp.short(),
                                         "frame": {"path": fr.path, "line": fr.line, "function": fr.function}}

    def label(self) -> str:
        """``id`` or ``id:key`` (how other findings refer to this one)."""
        return self.id + (f":{self.key}" if self.key and not self.id.endswith(self.key) else "")

    def scan_target(self) -> str:
        """What to pass to ``ascendify scan``: the user file that raised, else ``.``."""
        if self.frame and is_user_frame(self.frame["path"]) and not self.frame["path"].startswith("<"):
            return self.frame["path"]
        return "."

    def sort_key(self) -> tuple:
        t = self.first_time if self.first_time is not None else float("inf")
        return (SEV_ORDER[self.severity], ROLE_ORDER[self.role], self.generic, t, self.first_seq)

    def to_dict(self) -> dict:
        from ascendify.diagnose.rules import rule_info

        target = self.scan_target()
        rules = [dict(r, command=f"ascendify scan {target} --select {r['code']}") for r in rule_info(self.rules)]
        return {
            "id": self.id, "family": self.family, "title": self.title, "severity": self.severity, "role": self.role,
            "confidence": self.confidence, "key": self.key or None, "count": self.count, "ranks": sorted(self.ranks),
            "first_time": _iso(self.first_time), "evidence": [e.to_dict() for e in self.evidence],
            "exception": self.exception, "python_frame": self.frame, "cause": self.cause, "fix": self.fix,
            "next_step": self.next_step, "details": self.details, "scan_rules": rules,
            "consequence_of": self.consequence_of or None, "source": self.source, "verified": self.verified,
            "reason": self.reason or None, "known_issue": self.known_issue, "framework_settings": self.settings or None,
            "variant": self.variant or None, **({"incident": self.incident} if self.incident else {}),
        }


BOILERPLATE_MESSAGES = (
    "TypeError: 'NoneType' object is not subscriptable", "TypeError: 'NoneType' object is not iterable",
    "TypeError: 'NoneType' object is not callable", "AttributeError: 'NoneType' object has no attribute",
    "TypeError: '>=' not supported between instances of 'NoneType' and 'tuple' int float str list dict",
    "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'",
    "TypeError: f() got an unexpected keyword argument", "TypeError: f() missing 1 required positional argument",
    "TypeError: f() takes 2 positional arguments but 3 were given", "KeyError IndexError: list index out of range",
    "ValueError: too many values to unpack (expected 2)", "ValueError: not enough values to unpack",
    "RuntimeError: The size of tensor a must match the size of tensor b at non-singleton dimension 0",
    "RuntimeError: shape is invalid for input of size", "RuntimeError: mat1 and mat2 shapes cannot be multiplied",
    "RuntimeError: expected scalar type Float but found Half", "AssertionError AssertionError: assert",
    # pip's resolver frame: every conflict prints it; the packages named in it are the specific part
    "ERROR: Cannot install -r requirements.txt (line 1) and foo==1.0 because these package versions have conflicting "
    "dependencies. The conflict is caused by: The user requested foo==1.0 bar 2.0 depends on To fix this you could try "
    "to: 1. loosen the range of package versions you've specified 2. remove package versions to allow pip to attempt to "
    "solve the dependency conflict ERROR: ResolutionImpossible: for help visit "
    "https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts",
    # CANN's message frame: error-manager tails, inner-error and asynchronous-stack notes, plog headers
    "EZ9999: Inner Error! TraceBack (most recent call last): [FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]",
    "[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:148] call rtFoo failed, runtime result = 507899. ret is -1",
    "[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53] execution failed, reason=",
    "The Inner error is reported as above. The process exits for this inner error, and the current working operator "
    "name is Foo. Since the operator is called asynchronously, the stacktrace may be inaccurate. If you want to get the "
    "accurate stacktrace, please set the environment variable ASCEND_LAUNCH_BLOCKING=1.",
    "Rectify the fault based on the error information in the ascend log. [ERROR] RUNTIME(1,python3) [task.cc:1] "
    "(PID:1, Device:0, RankID:-1) ERR00100 PTA call acl api failed NPU function error: c10_npu compiler_depend.ts",
)
"""Standard Python / PyTorch messages: their words say which kind of error happened, not which issue (a known issue
matched by these words alone, ``NoneType``, ``subscriptable``, ``non-singleton dimension``, is not attached)."""
_BOILERPLATE_WORDS: Optional[frozenset] = None
BOILERPLATE_MIN = 2
"""Terms beyond the boilerplate a known-issue match must share with the log."""


def _boilerplate_only(m) -> bool:
    """The match shares fewer than :data:`BOILERPLATE_MIN` terms with the log that are not words of a standard
    Python / PyTorch error message (:data:`BOILERPLATE_MESSAGES`) or of any error line."""
    global _BOILERPLATE_WORDS
    if _BOILERPLATE_WORDS is None:
        _BOILERPLATE_WORDS = frozenset(ki_mod.tokens(" ".join(BOILERPLATE_MESSAGES))) | _GENERIC_TOKENS
    rest = [t for t in m.terms if t not in _BOILERPLATE_WORDS and not t.endswith("error")]
    return len(rest) < BOILERPLATE_MIN


def _absorb(into: Finding, f: Finding) -> None:
    """``f``'s lines counted under ``into`` (evidence up to EVIDENCE_MAX, ranks, first time, exception, frame)."""
    into.count += f.count
    into.ranks |= f.ranks
    if f.first_time is not None and (into.first_time is None or f.first_time < into.first_time):
        into.first_time = f.first_time
    into.first_seq = min(into.first_seq, f.first_seq)
    have = {(e.file, e.line) for e in into.evidence}
    for e in f.evidence:
        if (e.file, e.line) not in have and len(into.evidence) < EVIDENCE_MAX:
            into.evidence.append(e)
    if into.exception is None and f.exception is not None:
        into.exception = f.exception
    if into.frame is None and f.frame is not None:
        into.frame = f.frame
    for k, v in f.details.items():
        into.details.setdefault(k, v)
    if not into.reason and f.reason:
        into.reason = f.reason


YEARLESS = 2000
"""Year given to timestamps that carry none (glog ``W0324 13:00:25``, vLLM ``03-24 13:00:25``) when the
log has no full date either; such times are printed without a year."""


def _iso(t: Optional[float]) -> Optional[str]:
    """ISO 8601 time, or ``MM-DDTHH:MM:SS.ffffff`` for a log whose timestamps name no year."""
    if t is None:
        return None
    dt = datetime.fromtimestamp(t)
    if dt.year == YEARLESS:
        return dt.isoformat(timespec="microseconds")[5:]
    return dt.isoformat(timespec="microseconds")


@dataclass
class Report:
    findings: list
    files: list  # FileStats
    notes: list
    context: dict = field(default_factory=dict)
    incidents: list = field(default_factory=list)  # separate incidents (each a Report) when the inputs hold more than one

    @property
    def errors(self) -> list:
        return [f for f in self.findings if f.severity == "error"]

    def first_error(self) -> Optional[Finding]:
        if self.incidents:
            return self.incidents[0].first_error()
        errs = self.errors
        if not errs:
            return None
        return min(errs, key=lambda f: (f.first_time if f.first_time is not None else float("inf"), f.first_seq))

    def first_failure(self) -> Optional[Finding]:
        """The error *cause* that happened first in time (the rank that failed first), else the first error.
        Without times, a cause on the rank torch elastic names as the first observed failure comes first.
        With separate incidents: that of the first incident."""
        if self.incidents:
            return self.incidents[0].first_failure()
        causes = [f for f in self.errors if f.role == "cause" and not f.generic] or [f for f in self.errors if f.role == "cause"]
        if not causes:
            return self.first_error()
        lr = (self.context.get("launcher_first_rank") or {}).get("value")
        return min(causes, key=lambda f: (f.first_time if f.first_time is not None else float("inf"),
                                          lr is None or lr not in f.ranks, f.first_seq))

    def to_dict(self) -> dict:
        fe = self.first_error()
        ff = self.first_failure()
        first_failure = None
        if ff is not None:
            ev = ff.evidence[0]
            first_failure = {"finding": ff.label(), "rank": ev.rank, "ranks": sorted(ff.ranks), "time": _iso(ff.first_time),
                             "file": ev.file, "line": ev.line,
                             "launcher_rank": (self.context.get("launcher_first_rank") or {}).get("value")}
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
                "first_failure": first_failure,
                "framework": (self.context.get("framework") or {}).get("value"),
                "incidents": max(1, len(self.incidents)),
            },
            "context": self.context,
            "findings": [dict(f.to_dict(), order=i + 1) for i, f in enumerate(self.findings)],
            "files": [{"path": s.path, "lines": s.lines, "bytes": s.bytes, "matched_lines": s.hits, "skipped": s.skipped or None} for s in self.files],
            "notes": self.notes,
            **({"incidents": [dict(_incident_summary(r), incident=i) for i, r in enumerate(self.incidents, 1)]}
               if self.incidents else {}),
        }


def _incident_summary(rep: "Report") -> dict:
    d = rep.to_dict()
    return {"files": [s.path for s in rep.files], "root_cause": d["summary"]["root_cause"],
            "first_failure": d["summary"]["first_failure"], "findings": len(rep.findings),
            "errors": len(rep.errors), "framework": d["summary"]["framework"]}


@dataclass
class _Target:
    fid: str
    make: object  # () -> Finding
    role: str
    post: object = None  # (Finding, Hit, first: bool) -> None
    code: str = ""  # the code a wrapper target stands for (shown when folded into its block's cause)
    generic: bool = False  # a generic reading (signature priority < 0, or a code no entry catalogues): yields to
    # a specific cause of its error block (see Aggregator._flush)
    code_only: bool = False  # a finding made from the code alone (E-code / ACL / ERR finders): never explains a text
    message: str = ""  # the upstream message template of the signature (a reason it already states)
    sig: str = ""  # the signature id of a signature target (its fid is ``sig`` or ``sig:key``)


class Aggregator:
    """Collect hits into findings with bounded memory.

    Hits of one file and rank that are at most ``BLOCK_GAP`` lines apart form a
    block; a block with a specific finding (cause or consequence) folds its
    wrapper codes (``EZ9999``, ``ERR01100``, ``error code is 507015`` …) into it
    as evidence instead of listing them as findings of their own.
    """

    def __init__(self, kb: KnowledgeBase, context: Optional[Context] = None):
        self.kb = kb
        self.context = context if context is not None else Context()
        self.findings: dict = {}
        self.keys_per_sig: dict = {}
        self.blocks: dict = {}  # (file, rank) -> [Hit]
        self.chains: dict = {}  # (file, chain) -> [(pos, link, [fid])]
        self.symptoms = metrics_mod.load_symptoms()
        self.bare: list = []  # exception lines outside tracebacks that no entry explains (a fallback)
        self.paste: list = []  # [(file, line, text)]: every line of a short paste (scanner.PASTE_MAX), else empty
        self.query_head: list = []  # the first QUERY_HEAD matched line texts (known-issue retrieval over the whole log)
        self.query_tail: deque = deque(maxlen=QUERY_TAIL)  # and the last QUERY_TAIL
        self.salient: list = []  # the first SALIENT_KEEP error-looking lines nothing matched (scanner.SALIENT_WORDS)
        self.variant_sigs: dict = {}  # finding id -> its signature, for entries with variants
        self.sig_of: dict = {}  # finding id -> its signature (bounded), for the known-issue specificity rule
        self.bench: list = []  # (concurrency, mean TPOT ms, hit) of serving-benchmark runs, in reading order (bounded)
        self._bench_c: Optional[float] = None
        self._log_best: dict = {}  # framework -> the known issue the log's kept lines match as a whole (or None)
        self.log_codes: set = set()  # the error codes the log shows (bounded): a known issue about other codes is no match

    def _log_match(self, idx, fw: Optional[str]):
        """``idx.best`` over the log's kept lines (head and tail), searched once per diagnosis: the last-resort
        finding and the whole-log fallback of :meth:`_known_issues` ask the same question."""
        if fw not in self._log_best:
            q = self.query_head + list(self.query_tail)
            if self.paste:  # a short paste: its other lines too (a message fragment has no word a trigger finds)
                have = set(q)
                q += [t for _f, _n, t in self.paste if t not in have and not _FRAME_LINE.match(t)]
            self._log_best[fw] = idx.best(q, framework=fw, codes=self.log_codes)
        return self._log_best[fw]

    def _get(self, fid: str, make) -> Finding:
        f = self.findings.get(fid)
        if f is None:
            f = self.findings[fid] = make()
        return f

    # ------------------------------------------------------------------ intake

    def add(self, hit: Hit) -> None:
        for ev in hit.events:
            self._add_symptom(ev, hit)
        m = hit.match
        if (m.cann_codes or m.acl_codes or m.err_codes) and len(self.log_codes) < LOG_CODES_MAX:
            self.log_codes.update(m.cann_codes)
            self.log_codes.update(str(c) for c in m.acl_codes)
            self.log_codes.update(f"ERR{ss}{ccc}" for ss, ccc, _w in m.err_codes)
        if hit.salient or m.signatures or m.cann_codes or m.acl_codes or m.err_codes or hit.exc is not None or hit.reason:
            qt = hit.text[:400]
            if len(self.query_head) < QUERY_HEAD:
                self.query_head.append(qt)
            else:
                self.query_tail.append(qt)
        if hit.bench:
            self._bench_line(hit)
            return
        if hit.salient:
            if len(self.salient) < SALIENT_KEEP:
                self.salient.append(hit)
            return
        if not (m.signatures or m.cann_codes or m.acl_codes or m.err_codes or hit.exc is not None or hit.reason):
            return
        key = (hit.file, hit.rank)
        blk = self.blocks.get(key)
        if blk is None and hit.rank is None:
            # a line without a rank right after a ranked block of the same file continues it (CANN prints its
            # EZ… continuation lines without the launcher's rank prefix)
            near = [k for k, b in self.blocks.items() if k[0] == hit.file and 0 <= hit.line - b[-1].line <= BLOCK_GAP]
            if len(near) == 1:
                key, blk = near[0], self.blocks[near[0]]
        if blk and (hit.line - blk[-1].line > BLOCK_GAP or len(blk) >= BLOCK_MAX or hit.line < blk[-1].line):
            self._flush(key)
            blk = None
        if blk is None:
            self.blocks[key] = [hit]
        else:
            blk.append(hit)

    def end_file(self, name: str) -> None:
        for key in [k for k in self.blocks if k[0] == name]:
            self._flush(key)

    def _flush(self, key) -> None:
        hits = self.blocks.pop(key, [])
        per_hit = [(h, self._targets(h)) for h in hits]
        # one error, one finding: a line of the block that matched an entry without its key (the exception line
        # "error code is 507015") joins the finding of the same entry keyed by another line (the kernel name)
        keyed = {}
        for _h, ts in per_hit:
            for t in ts:
                if t.sig and t.fid != t.sig:
                    keyed.setdefault(t.sig, t)
        if keyed:
            per_hit = [(h, [keyed.get(t.sig, t) if t.sig and t.fid == t.sig else t for t in ts]) for h, ts in per_hit]
        primary = None
        for role in ("cause", "consequence"):
            cands = [t for _, ts in per_hit for t in ts if t.role == role]
            primary = next((t for t in cands if not t.generic), cands[0] if cands else None)
            if primary is not None:
                break
        # generic readings yield: with a specific cause in the block, its generic causes fold into it
        fold_generic = primary is not None and primary.role == "cause" and not primary.generic
        reasons, strong = self._reasons(per_hit)
        reason_t = None
        if strong and (primary is None or primary.generic or primary.role == "wrapper"):
            # no catalogue entry explains the block: the message's own reason is the finding
            rh = reasons[0][0]
            code = reason_mod.code_of(rh.text) or next(
                (t.code for _h, ts in per_hit for t in ts if t.code and _CODE_SHAPE.fullmatch(t.code)), "")
            carrier = next((t for h, ts in per_hit if h is rh for t in ts if t.code == code and t.make is not None), None)
            reason_t = primary = self._reason_target(code, reasons[0][1], carrier)
            fold_generic = True
            lines = {id(h) for h, _r in reasons}
            per_hit = [(h, ts + [reason_t] if id(h) in lines or (h.exc is not None and not ts) else ts) for h, ts in per_hit]
        folded = []
        for h, ts in per_hit:
            fids = []
            for t in ts:
                if primary is not None and t.code and (t.role == "wrapper" or (fold_generic and t.generic and t.role == "cause")):
                    folded.append((h, t))
                    continue
                f = self.findings.get(t.fid)
                first = f is None
                if f is None:
                    f = self.findings[t.fid] = t.make()
                f.add(h)
                if t.post is not None:
                    t.post(f, h, first)
                fids.append(t.fid)
            if h.exc is not None and h.exc.bare:
                if not ts and len(self.bare) < 8 and h.exc.type not in {b.exc.type for b in self.bare}:
                    self.bare.append(h)  # reported only when nothing else explains the log
            elif h.exc is not None:
                if not ts:
                    fids.append(self._add_exception(h))
                self._chain(h, fids)
        if reasons and primary is not None and primary.fid in self.findings:
            pf = self.findings[primary.fid]
            if not pf.reason:
                pf.reason = reasons[0][1]
            if reason_t is None:
                for h, _r in reasons[:2]:
                    if h.line not in {e.line for e in pf.evidence if e.file == h.file} and len(pf.evidence) < EVIDENCE_MAX:
                        pf.evidence.append(Evidence(h.file, h.line, h.rank, h.time, h.text))
        if folded:
            pf = self.findings[primary.fid]
            codes = pf.details.setdefault("wrapped_codes", [])
            for h, t in folded:
                if t.code not in codes and len(codes) < 10:
                    codes.append(t.code)
                if h.line not in {e.line for e in pf.evidence if e.file == h.file}:
                    pf.add(h)

    def _reasons(self, per_hit: list) -> tuple:
        """``([(hit, reason)], strong)`` of a block: the reason texts of its CANN lines (in order), then the
        message of the Python exception printed with a code; duplicates dropped.  ``strong``: the first reason
        is one no catalogue entry of its line explains (a continuation line, a ``Reason:`` field, the text of a
        wrapper code, an exception's ``detail:``), so it may stand as the finding; a reason on a line that a
        catalogued cause matched is that entry's own message (evidence only)."""
        out, seen = [], set()
        strong_first = None
        explicit_first = None  # a reason given in a field of its own (Reason:, reason=) beats the text around it
        has_code = any(t.code or t.role == "wrapper" for _h, ts in per_hit for t in ts) or any(h.reason for h, _ in per_hit)
        for h, ts in per_hit:
            if h.reason and h.reason not in seen:
                seen.add(h.reason)
                explained = any(t.role != "wrapper" and not t.code_only for t in ts) or any(
                    t.message and reason_mod.covers(t.message, h.reason) for t in ts)
                out.append((h, h.reason))
                if strong_first is None and (not explained or reason_mod.explicit(h.text)):
                    strong_first = len(out) - 1
                if explicit_first is None and reason_mod.explicit(h.text) and not explained:
                    explicit_first = len(out) - 1
        if has_code:
            for h, _ts in per_hit:
                if h.exc is not None:
                    r = reason_mod.exception_reason(h.exc.type, h.exc.message)
                    if r and r not in seen and not any(r in x or x in r for x in seen):
                        seen.add(r)
                        out.append((h, r))
                        if strong_first is None and reason_mod.explicit(h.exc.message):
                            strong_first = len(out) - 1
        if explicit_first is not None and strong_first is not None:
            strong_first = explicit_first
        if strong_first:
            out.insert(0, out.pop(strong_first))
        return out[:8], strong_first is not None

    def _reason_target(self, code: str, text: str, carrier: Optional[_Target] = None) -> _Target:
        """The finding a block's own reason makes: the wrapper finding of the code that printed it (``carrier``,
        keeping its id) turned into a cause titled with the reason, else a ``message-reason`` finding."""
        key = " ".join(text.split())[:120]
        seen = self.keys_per_sig.setdefault("reason", set())
        if key not in seen and len(seen) >= KEYS_PER_SIGNATURE:
            key = "(other)"
        else:
            seen.add(key)
        fid = (carrier.fid if carrier is not None else "reason") + f":{key}"
        what = f"The {code} message" if code else "The message"
        own = reason_mod.advice_lead(text)

        def make() -> Finding:
            title = (f"{code}: " if code else "") + text
            base = carrier.make() if carrier is not None else None
            return Finding(
                id=base.id if base is not None else "message-reason", family=base.family if base is not None else "reason",
                title=title if len(title) <= 160 else title[:157] + "...",
                severity="error", role="cause", rules=base.rules if base is not None else (),
                cause=f"{what} states its own reason: \"{text}\". {reason_mod.UNREAD}"
                      + (f" ({base.title}.)" if base is not None else ""),
                fix=own + "Change what the reason names: the argument, shape, dtype or order it states must hold (for an "
                    "operator, the inputs you pass it or the framework option that builds them); if the call comes from "
                    "a framework or library, check its release notes and issues for this message.",
                next_step="Rerun with ASCEND_LAUNCH_BLOCKING=1 so the failing operator is the one in the traceback; the "
                          "plog ($HOME/ascend/log/debug/plog) holds the full CANN message.",
                source="the message text in the log (CANN error manager continuation lines / Reason: field)", key=key,
                reason=text, base_confidence=0.6,
            )

        return _Target(fid, make, "cause")

    def _chain(self, hit: Hit, fids: list) -> None:
        ck = (hit.file, hit.exc.chain)
        lst = self.chains.get(ck)
        if lst is None:
            if len(self.chains) >= MAX_CHAINS:
                return
            lst = self.chains[ck] = []
        if len(lst) < 32:
            lst.append((hit.exc.pos, hit.exc.link, fids))

    def _targets(self, hit: Hit) -> list:
        m = hit.match
        out = [self._sig_target(sig, groups) for sig, groups in m.signatures]
        out += [self._cann_target(code) for code in m.cann_codes]
        out += [self._acl_target(code) for code in m.acl_codes]
        out += [self._err_target(ss, ccc) for ss, ccc, _word in m.err_codes]
        return out

    def _sig_target(self, sig: Signature, groups: dict) -> _Target:
        key = groups.get(sig.key, "") if sig.key else ""
        if key:
            seen = self.keys_per_sig.setdefault(sig.id, set())
            if key not in seen and len(seen) >= KEYS_PER_SIGNATURE:
                key = "(other)"
            else:
                seen.add(key)
        fid = f"{sig.id}:{key}" if key else sig.id

        if sig.variants:
            self.variant_sigs[fid] = sig
        if fid not in self.sig_of and len(self.sig_of) < 4 * KEYS_PER_SIGNATURE:
            self.sig_of[fid] = sig

        def make() -> Finding:
            fill = key or "this operator"
            return Finding(
                id=sig.id, family=sig.family, title=sig.title + (f": {key}" if key else ""), severity=sig.severity,
                role=sig.role, cause=sig.cause.replace("{key}", fill), fix=sig.fix.replace("{key}", fill),
                next_step=sig.next_step.replace("{key}", fill), source=sig.source, key=key, rules=sig.rules_for(key),
                verified=sig.verified, base_confidence=0.9 if sig.verified else 0.65,
            )

        def post(f: Finding, hit: Hit, first: bool) -> None:
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

        role = self.findings[fid].role if fid in self.findings else sig.role
        generic = sig.priority < 0
        return _Target(fid, make, role, post, code=(key or groups.get("code") or sig.id) if role == "wrapper" or generic else "",
                       generic=generic, message=sig.message, sig=sig.id)

    def _cann_target(self, code: str) -> _Target:
        title, role, fix = self.kb.cann_code(code)
        module = self.kb.cann_modules.get(code[1], "unknown module")
        known = any(e.first[:2] == code[:2] and e.first <= code <= e.last for e in getattr(self.kb, "cann_codes", ()))

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
                base_confidence=0.75 if known else 0.5,
            )

        return _Target(f"cann-{code}", make, role, code=code, generic=not known, code_only=True)

    def _acl_target(self, code: int) -> _Target:
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
                base_confidence=0.7 if known else 0.45,
            )

        return _Target(f"acl-{code}", make, role, code=s, generic=known is None, code_only=True)

    def _err_target(self, ss: str, ccc: str) -> _Target:
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
                base_confidence=0.5,
            )

        return _Target(f"torch-npu-{code}", make, "wrapper", code=code, code_only=True)

    def _add_exception(self, hit: Hit) -> str:
        exc = hit.exc
        msg = " ".join(exc.message.split())
        key = f"{exc.type}: {msg[:160]}" if msg else exc.type
        seen = self.keys_per_sig.setdefault("python-exception", set())
        if key not in seen and len(seen) >= KEYS_PER_SIGNATURE:
            key = "(other)"
        else:
            seen.add(key)
        fid = f"python-exception:{key}"
        launcher = exc.type.rsplit(".", 1)[-1] in LAUNCHER_EXCEPTIONS
        where = (f" at {exc.frame.path}:{exc.frame.line} in {exc.frame.function}" if exc.frame else "")
        comp = exc.component if not launcher else None

        def make() -> Finding:
            if comp is not None:  # raised inside a framework's own code: name the framework, its feature and the way out
                c_cause, c_fix = components_mod.reading(comp[0], comp[1], exc.type, msg)
                return Finding(
                    id="python-exception", family="python", title=(key if len(key) <= 140 else key[:137] + "..."),
                    severity="error", role="cause", cause=c_cause, fix=c_fix,
                    next_step="Rerun with ASCEND_LAUNCH_BLOCKING=1 so an asynchronous NPU error is raised at the op that "
                              "failed; compare `pip list` with the versions the framework's release notes name.",
                    source=f"the Python traceback in the log; {comp[0].source}", key="" if key == "(other)" else key,
                    generic=True, base_confidence=0.45,
                )
            own = reason_mod.advice_lead(msg) if msg and not launcher else ""
            return Finding(
                id="python-exception", family="python", title=(key if len(key) <= 140 else key[:137] + "..."),
                severity="error", role="consequence" if launcher else "cause",
                cause=(f"The program raised {exc.type}{where}" + (f": {msg[:300].rstrip(' .')}" if msg else "") + ". No catalogue "
                       "entry explains this message; the traceback's user frame is where it was raised."
                       if not launcher else
                       "The launcher reports that a worker process failed; the worker's own error (above) is the cause."),
                fix=(own + "Read the message and the code at the frame shown; if the line calls torch / torch_npu, run "
                     "`ascendify scan` on the file for CUDA leftovers." if not launcher else
                     "Fix the error of the worker that failed first (see the other findings and the per-rank logs)."),
                next_step="Rerun with ASCEND_LAUNCH_BLOCKING=1 so an asynchronous NPU error is raised at the op that failed.",
                source="the Python traceback in the log", key="" if key == "(other)" else key, generic=True,
                base_confidence=0.3 if launcher else 0.45,
            )

        self._get(fid, make).add(hit)
        return fid

    def _add_symptom(self, ev, hit: Hit) -> None:
        sym = self.symptoms.symptoms.get(ev.id)
        if sym is None:
            return
        fid = f"metric-{ev.id}"
        if ev.final:  # end-of-stream counts of a symptom reported earlier
            if fid in self.findings:
                self.findings[fid].details.update(ev.details)
            return
        at = metrics_mod.step_text(ev)
        val = metrics_mod.value_text(ev)

        def make() -> Finding:
            fill = {"step": at, "value": val}
            sub = (lambda t: t.replace("{step}", fill["step"]).replace("{value}", fill["value"]))
            return Finding(
                id=fid, family="numeric", title=sub(sym.title), severity=sym.severity, role=sym.role, cause=sub(sym.cause),
                fix=sub(sym.fix), next_step=sub(sym.next_step), source=sym.source, verified=sym.verified,
                base_confidence=sym.confidence,
            )

        f = self._get(fid, make)
        first = f.count == 0
        # the symptom's time and order are those of its onset (the first NaN record, a loss scale's first
        # decrease), not of the later record that decided it: so the symptom that began first leads
        onset = ev.onset_text or (ev.text if ev.line != hit.line else "")
        when = hit.time
        if onset and hit.time is not None:  # a year-less stamp takes the decided record's year; at most 30 days before
            year = _dt.datetime.fromtimestamp(hit.time).year  # the scanner's naive local seconds
            t = structure.parse_time(onset, year)[0]
            if t is not None and hit.time - 30 * 86400 <= t <= hit.time:
                when = t
        f.add(dataclasses.replace(hit, line=ev.line, text=ev.text.strip(), exc=None, frame=None, time=when))
        if first:
            rec = ev.onset_record or ev.record
            f.first_seq = hit.seq - 1 + rec / (rec + 1e6)  # between the previous hit and this one, by onset record
            f.details.update({k: v for k, v in ev.details.items() if v is not None})
            if ev.step is not None:
                f.details["first_step"] = int(ev.step) if float(ev.step).is_integer() else ev.step
            f.details["record"] = ev.record

    # ------------------------------------------------------------------ result

    def _resolve_chains(self) -> None:
        """In a chain of exceptions the cause is the first one a catalogue entry
        explains (else the first printed); the others are consequences of it
        (printed after) or context it was raised in (printed before)."""
        chain_causes = set()
        demote = {}
        for members in self.chains.values():
            if len(members) < 2:
                continue
            members = sorted(members, key=lambda m: m[0])
            cause_pos = None
            for pos, _link, fids in members:
                if any(fid in self.findings and self.findings[fid].role == "cause" and not self.findings[fid].generic for fid in fids):
                    cause_pos = pos
                    break
            if cause_pos is None:
                cause_pos = members[0][0]
            head = next(fids for pos, _l, fids in members if pos == cause_pos)
            head_f = next((self.findings[f] for f in head if f in self.findings and self.findings[f].role == "cause"),
                          self.findings.get(head[0]) if head else None)
            chain_causes.update(head)
            for pos, link, fids in members:
                if pos == cause_pos or head_f is None:
                    continue
                for fid in fids:
                    demote.setdefault(fid, (pos > cause_pos, head_f, link))
        for fid, (after, head_f, link) in demote.items():
            f = self.findings.get(fid)
            if f is None or fid in chain_causes or f.role != "cause" or f is head_f:
                continue
            if after:
                f.role = "consequence"
                f.consequence_of = head_f.label()
                f.details["chain"] = ("raised while handling " if link == "context" else "raised from ") + head_f.label()
            else:
                f.role = "wrapper"
                f.details["chain"] = f"{head_f.label()} was raised while handling this exception"

    def _merge_unkeyed(self) -> None:
        """An entry's finding without a key (a line that did not name the kernel) joins the entry's only keyed
        finding when both are in the same file: one exception, one finding, even when the traceback printed
        between its lines is longer than a block."""
        by_sig: dict = {}
        for fid, f in self.findings.items():
            if f.source == "the Python traceback in the log" or f.id.startswith(("python-exception", "metric-")):
                continue
            by_sig.setdefault(f.id, []).append(fid)
        for sid, fids in by_sig.items():
            if sid not in fids or len(fids) != 2:
                continue
            other = next(x for x in fids if x != sid)
            loose, keyed = self.findings[sid], self.findings[other]
            if not keyed.key or keyed.role != loose.role or \
                    not {e.file for e in loose.evidence} & {e.file for e in keyed.evidence}:
                continue
            _absorb(keyed, loose)
            del self.findings[sid]
            for members in self.chains.values():
                for i, (pos, link, mf) in enumerate(members):
                    if sid in mf:
                        members[i] = (pos, link, [other if x == sid else x for x in mf if x != other or sid not in mf])
            for f in self.findings.values():
                if f.consequence_of == sid:
                    f.consequence_of = keyed.label()

    def _add_mismatch(self) -> None:
        text = self.context.mismatch()
        if not text:
            return
        f = Finding(
            id="stack-version-mismatch", family="environment", title="torch / torch_npu / CANN versions do not pair",
            severity="warning", role="cause", cause=f"The versions the log shows do not pair in the compatibility table: {text}.",
            fix="Install the torch_npu built for the installed CANN and torch (or the CANN the torch_npu needs); "
                "`ascendify doctor` checks the whole stack.",
            next_step="Run `pip list | grep -i torch` and `cat /usr/local/Ascend/ascend-toolkit/latest/*/ascend_toolkit_install.info`.",
            source=f"ascendify.kb.versions ({versions_source()})", base_confidence=0.7,
        )
        for k in ("torch_npu", "cann", "torch"):
            v = self.context.values.get(k)
            if v and v.get("from") == "log":
                f.evidence.append(Evidence(v["file"], v["line"], None, None, v["text"]))
                f.count += 1
        if not f.evidence:
            f.count = 1
        self.findings[f.id] = f

    def _antecedent(self, f: Finding, causes: list) -> Optional[Finding]:
        """The failure ``f`` (a consequence / wrapper) follows from: the latest cause
        at or before it in time (same rank first for a wrapper), preferring catalogued causes."""
        if f.first_time is not None:
            timed = [c for c in causes if c.first_time is not None and c.first_time <= f.first_time]
            if timed:
                known = [c for c in timed if not c.generic] or timed
                if f.role == "wrapper" and f.ranks:
                    same = [c for c in known if c.ranks & f.ranks]
                    if same:
                        return max(same, key=lambda c: c.first_time)
                return max(known, key=lambda c: c.first_time)
            if any(c.first_time is not None for c in causes):
                untimed = [c for c in causes if c.first_time is None]
                return untimed[0] if untimed else None
        return causes[0] if causes else None

    def result(self) -> list:
        for key in list(self.blocks):
            self._flush(key)
        self._resolve_chains()
        self._merge_unkeyed()
        if self.bare and not any(f.severity == "error" and f.role != "wrapper" for f in self.findings.values()):
            # a pasted exception line is all there is, or all else is a wrapper (ERR99999 printed after the exception
            # of a traceback cut above its header): the exception's own message is the cause, ahead of the wrapper
            for h in self.bare:
                f = self.findings[self._add_exception(h)]
                f.base_confidence = min(f.base_confidence, 0.35)
        self._add_mismatch()
        lr = (self.context.values.get("launcher_first_rank") or {}).get("value")
        # among causes without times, those on the rank torch elastic names as the first observed failure go first
        out = sorted(self.findings.values(), key=lambda f: f.sort_key()[:4] + (lr is not None and lr not in f.ranks,)
                     + f.sort_key()[4:])
        causes = [f for f in out if f.severity == "error" and f.role == "cause"]
        consequences = [f for f in out if f.severity == "error" and f.role == "consequence"]
        for f in out:
            if f.severity != "error" or f.role == "cause" or f.consequence_of:
                continue
            c = self._antecedent(f, causes) if causes else None
            if c is None and f.role == "wrapper" and consequences and f.first_time is not None:
                # no cause in the log (only the timeouts were pasted): a wrapper carries the consequence before it
                c = self._antecedent(f, [x for x in consequences if x.first_time is not None])
            if c is not None:
                f.consequence_of = c.label()
        self._variants()
        step = self._tpot_step()
        if step is not None:
            out.append(step)
        if not any(f.severity == "error" for f in out):
            last = self._last_resort()
            if last is not None:
                out.insert(0, last)
        fw_mod.apply(out, (self.context.values.get("framework") or {}).get("value"))
        self._components(out)
        self._known_issues(out)
        for f in out:
            extra = advice_for(f, self.context)
            if extra:
                f.fix = f.fix.rstrip() + " " + " ".join(extra)
                f.details["context_advice"] = extra
            f.confidence = confidence(f)
        return out


    @staticmethod
    def _components(out: list) -> None:
        """An ACL / CANN / torch_npu code or a wrapper raised inside a framework feature's own code (the traceback's
        deepest specific framework frame, data/components.toml) names that feature, its workaround and the upgrade;
        an exception no entry explains already reads so (:meth:`_add_exception`)."""
        for f in out:
            d = f.details.get("component")
            if f.severity != "error" or not d:
                continue
            comp = next((c for c in components_mod.load() if c.id == d["id"]), None)
            if comp is None:
                continue
            if f.id == "python-exception":  # worded by its component when made; what the feature does, after the
                f.cause = f.cause.rstrip() + components_mod.explain(comp)  # framework settings read the finding
                continue
            if f.id in VERSION_DRIFT:  # a version pairing: name the package whose code made the call first
                fr = d["frame"]
                f.fix = components_mod.drift(comp, PyFrame(fr["path"], fr["line"], fr["function"]),
                                             (f.frame or {}).get("path", "")) + " " + f.fix
                continue
            if f.generic or not comp.specific or not (
                    f.role == "wrapper" or f.family in ("cann-code", "acl-code", "torch-npu-code", "reason")):
                continue
            fr = d["frame"]
            cause, fix = components_mod.note(comp, PyFrame(fr["path"], fr["line"], fr["function"]))
            f.cause = f.cause.rstrip() + cause
            f.fix = f.fix.rstrip() + fix

    def _bench_line(self, hit: Hit) -> None:
        m = _BENCH_CONC.search(hit.text)
        if m:
            self._bench_c = float(m.group(1))
            return
        m = _BENCH_TPOT.search(hit.text)
        if m and self._bench_c is not None and len(self.bench) < 64:
            self.bench.append((self._bench_c, float(m.group(1)), hit))
            self._bench_c = None

    def _tpot_step(self) -> Optional[Finding]:
        """Serving-benchmark runs whose mean time per output token jumps (>= TPOT_STEP x) from one concurrency to
        the next (at most 4x the requests): the KV cache stopped holding them all."""
        runs = sorted(self.bench, key=lambda r: r[0])
        for (c1, t1, h1), (c2, t2, h2) in zip(runs, runs[1:]):
            if c2 > c1 and c2 <= 4 * c1 and t1 > 0 and t2 / t1 >= TPOT_STEP:
                f = Finding(
                    id="tpot-step", family="performance",
                    title=f"Time per output token jumps {t2 / t1:.1f}x from concurrency {c1:g} to {c2:g}",
                    severity="warning", role="cause",
                    cause=(f"Mean time per output token rose from {t1:g} ms at concurrency {c1:g} to {t2:g} ms at {c2:g}: "
                           "a step rather than a slope means the KV cache no longer holds all running requests, so the "
                           "server queues or preempts them (vLLM recomputes preempted requests)."),
                    fix=("Keep the concurrency below the step, or give the KV cache more room: raise "
                         "--gpu-memory-utilization, lower --max-model-len, raise --tensor-parallel-size; cap "
                         "--max-num-seqs at the concurrency the cache holds."),
                    next_step="Look for `is preempted by PreemptionMode` warnings and the KV cache usage in the server log "
                              "of the run at the higher concurrency.",
                    source="https://docs.vllm.ai/en/v0.9.1/configuration/optimization.html ; the step threshold is this "
                           "tool's heuristic", verified=False, base_confidence=0.6)
                f.add(h1)
                f.add(h2)
                f.details.update({"concurrency": [c1, c2], "mean_tpot_ms": [t1, t2]})
                return f
        return None

    def _variants(self) -> None:
        """Entries whose reading depends on other lines of the same log: the first variant whose words the
        log's kept lines (matched and error-looking, other than the finding's own) contain replaces the text."""
        if not self.variant_sigs:
            return
        lines = [t.lower() for t in self.query_head + list(self.query_tail)] + [h.text.lower() for h in self.salient]
        lines += [t.lower() for _f, _n, t in self.paste]  # a short paste: every line, the user's own words too
        for fid, sig in self.variant_sigs.items():
            f = self.findings.get(fid)
            if f is None:
                continue
            # the entry's own lines cannot choose its variant; lines folded into the finding (a code printed with it,
            # "EL0005: The resources are busy") can
            own = {e.text.lower() for e in f.evidence if any(a.lower() in e.text.lower() for a in sig.any)}
            others = [t for t in lines if t not in own]
            for when, title, cause, fix in sig.variants:
                if any(w.lower() in t for w in when for t in others):
                    f.title, f.cause, f.fix = title or f.title, cause or f.cause, fix or f.fix
                    f.variant = next(w for w in when if any(w.lower() in t for t in others))
                    break

    def _last_resort(self) -> Optional[Finding]:
        """A log with no catalogued error: the known issue its error-looking lines match, else the first such
        line's own words as the finding (instead of "no known error")."""
        loud = [h for h in self.salient if _LOUD.search(h.text)]
        if not loud:
            return self._paste_match()
        fw = (self.context.values.get("framework") or {}).get("value")
        m = None
        try:
            idx = ki_mod.load()
            m = self._log_match(idx, fw) if idx.records else None
        except (OSError, ValueError):
            m = None
        if m is not None and _boilerplate_only(m):
            m = None
        first = next((h for h in loud if reason_mod.extract(h.text)), loud[0])
        text = reason_mod.extract(first.text) or " ".join(first.text.split())[:300]
        if m is not None:
            terms = set(m.terms)
            best = sorted(loud, key=lambda h: -len(terms & set(ki_mod.tokens(h.text))))[:3]
            f = self._known_issue_finding(m, "error", 0.4)
            for h in best:
                f.add(h)
            _warning_only(f)
            return f
        own = reason_mod.advice_lead(text)
        f = Finding(id="log-error-line", family="reason", title=f"Error reported in the log: {text}"[:160], severity="error",
                    role="cause", cause=f"No catalogue entry or known issue explains this log; its first error line says: {text}",
                    fix=own + "Act on what the line says (the setting, file, package or value it names); if it comes from a "
                        "framework, search its issues for the message.",
                    next_step="Paste more of the log: the traceback or the lines just above this one usually hold the cause.",
                    source="the error line in the log", reason=text, base_confidence=0.3, generic=True)
        for h in loud[:3]:
            f.add(h)
        return f

    def _paste_match(self) -> Optional[Finding]:
        """A short paste with no error-looking line (a message fragment, a warning): the known issue its lines match
        at :data:`PASTE_CONFIDENCE` or more (an error when close, else a warning), with the lines that share the most
        terms as evidence; else None."""
        if not self.paste:
            return None
        try:
            idx = ki_mod.load()
        except (OSError, ValueError):
            return None
        if not idx.records:
            return None
        m = self._log_match(idx, (self.context.values.get("framework") or {}).get("value"))
        if m is None or m.confidence < PASTE_CONFIDENCE or _boilerplate_only(m):
            return None
        f = self._known_issue_finding(m, "error" if m.close else "warning", 0.35)
        terms = set(m.terms)
        best = sorted(self.paste, key=lambda x: -len(terms & set(ki_mod.tokens(x[2]))))[:3]
        for name, line, text in sorted(best, key=lambda x: (x[0], x[1])):
            f.evidence.append(Evidence(name, line, None, None, text))
            f.count += 1
        _warning_only(f)
        return f

    def _known_issue_finding(self, m, severity: str, base: float) -> Finding:
        """The finding a known issue is when it stands as the log's only cause (no evidence yet): a close match
        stated, a loose one offered ("closest known issue", "Perhaps ... not certain")."""
        rec = m.record
        kind = "known issue" if m.close else "closest known issue"
        f = Finding(id="known-issue", family=rec.get("framework") or rec.get("project") or "known-issue",
                    title=f"{kind} {rec['id']}: {rec.get('title') or rec['cause']}"[:160], severity=severity, role="cause",
                    cause=rec["cause"] if m.close else f"Perhaps (match {m.confidence:.2f}, not certain): {rec['cause']}",
                    fix=rec["fix"], next_step="Compare the thread with your setup (versions, flags); the log lines it "
                    "quotes are shown as evidence.", source=rec["url"], key=rec["id"])
        f.known_issue = dict(m.to_dict(), fix_note=ki_mod.compare_fixed(rec, self.context.versions()) or None)
        f.base_confidence = round(base + 0.4 * m.confidence, 2)
        return f

    def _known_issues(self, out: list) -> None:
        """Match the first error findings (each by its evidence, reason and exception) against the known issues;
        when none matches, the log's matched lines as a whole; the matched issue's fix leads the finding's fix
        when the finding is generic (a wrapper, a reason, an exception no entry explains) or the match is close."""
        errors = [f for f in out if f.severity == "error"]
        if not errors and not self.query_head:
            return
        try:
            idx = ki_mod.load()
        except (OSError, ValueError):
            return
        if not idx.records:
            return
        fw = (self.context.values.get("framework") or {}).get("value")
        versions = self.context.versions()
        matched = False
        for f in errors[:KI_FINDINGS]:
            if f.known_issue is not None:
                matched = True
                continue
            q = [e.text for e in f.evidence] + [f.reason, f.title]
            if f.exception:
                q.append(f"{f.exception['type']}: {f.exception['message']}")
            m = idx.best([x for x in q if x], framework=fw, codes=self.log_codes)
            if m is not None and not self._only_own_line(f, m) and not self._misses_reason(f, m) \
                    and not _boilerplate_only(m):
                self._attach(f, m, versions)
                matched = True
        weak = [f for f in errors if f.generic or f.role == "wrapper" or f.family in ("reason", "python")]
        if not matched and errors and len(weak) == len(errors):
            # no specific finding and none matched by its own lines: the log's lines as a whole, for the first finding
            m = self._log_match(idx, fw)
            if m is not None and not _boilerplate_only(m) and not self._misses_reason(errors[0], m):
                self._attach(errors[0], m, versions)

    def _only_own_line(self, f: Finding, m) -> bool:
        """A specific catalogue finding (an OOM, a float64 op) gets a known issue only when the issue shares a word
        beyond the entry's own message template (its literals and example lines): the same generic message alone
        (every OOM prints the same words) does not say that this is that thread's issue."""
        if f.generic or f.role == "wrapper" or (f.reason and f.reason in f.title) or not f.evidence or f.family in (
                "reason", "python", "cann-code", "acl-code", "torch-npu-code"):
            return False
        sig = next((sg for fid, sg in self.sig_of.items() if fid == f.label() or fid == f.id or fid.startswith(f.id + ":")), None)
        if sig is None:
            return False
        template = set(ki_mod.tokens(" ".join(sig.any + sig.also_any + sig.examples + (sig.message, sig.title))))
        return not [t for t in m.terms if t not in template and t not in _GENERIC_TOKENS and not t.endswith("error")]

    @staticmethod
    def _misses_reason(f: Finding, m) -> bool:
        """A finding that *is* its message's own reason (``EZ9999: <reason>``) takes a known issue only when the
        issue shares the reason's own distinctive words (:data:`REASON_SHARED`): a thread matched by the wrapper
        lines around it (``ERR01100 OPS call acl api failed``, ``EZ9999``) is about another reason."""
        if not f.reason or f.reason[:60] not in f.title:  # the title may end the reason with "..."
            return False
        # counted by the reason's whole words, not its tokens: an op name (MoeDistributeDispatchV2 -> moe, dispatch,
        # ...) is one word the thread shares, and a part of another word (localMoeExpertNum's "moe") is none
        words = set()
        for w in set(re.findall(r"[A-Za-z][A-Za-z0-9_]*", f.reason)):
            mine = [t for t in ki_mod.tokens(w) if t not in _GENERIC_TOKENS and not t.endswith("error")]
            if mine:
                words.add(max(mine, key=len))
        if not words:
            return False
        return len(words & set(m.terms)) < min(REASON_SHARED, len(words))

    @staticmethod
    def _other_code(f: Finding, rec: dict) -> bool:
        """``f`` is the catalogue's entry for one specific code (``cann-EL0005``, ``acl-507015``) and the thread's
        quoted lines and title show codes, none of them that one: the thread is about another error."""
        if f.family not in ("cann-code", "acl-code", "torch-npu-code") or "-" not in f.id:
            return False
        code = f.id.split("-", 1)[1]
        if ki_mod.generic_code(code):
            return False
        theirs = ki_mod.codes_of(" ".join(list(rec.get("quote") or []) + [rec.get("title") or ""]))
        return bool(theirs) and code not in theirs

    @staticmethod
    def _phrase_explained(f: Finding) -> bool:
        """A leading message-phrase rule (data/reasons.toml) or framework setting (data/frameworks.toml: the port
        taken, vLLM's memory headroom) matched the finding: a loose thread match follows it instead of leading."""
        if not f.settings:
            return False
        by_id = {s.id: s for s in fw_mod.load()}
        return any(by_id[i].lead for i in f.settings if i in by_id)

    @staticmethod
    def _reason_rule_read(f: Finding) -> bool:
        """A leading message-phrase rule of data/reasons.toml (a regex with a plain-words cause) read the message's
        own reason: what the message says is wrong leads, and a thread matched by its words follows it, however close
        (threads share the wrapper lines and the op name, not necessarily the reason)."""
        if not f.settings:
            return False
        by_id = {s.id: s for s in fw_mod.load()}
        return any(by_id[i].lead and by_id[i].regex is not None and by_id[i].cause and "*" in by_id[i].framework
                   for i in f.settings if i in by_id)

    @staticmethod
    def _shares_reason(f: Finding, m) -> bool:
        """The thread shares the reason's own words (:data:`REASON_SHARED` of its whole words, an op name counted
        once), so it is about this message and not only about the op or the wrapper lines around it."""
        words = set()
        for w in set(re.findall(r"[A-Za-z][A-Za-z0-9_]*", f.reason or "")):
            mine = [t for t in ki_mod.tokens(w) if t not in _GENERIC_TOKENS and t not in _REASON_STOP
                    and not t.endswith("error")]
            if mine:
                words.add(max(mine, key=len))
        terms = set(getattr(m, "terms", ()) or ())
        return bool(words) and len(words & terms) >= min(REASON_SHARED, len(words))

    def _attach(self, f: Finding, m, versions: dict) -> None:
        rec = m.record
        note = ki_mod.compare_fixed(rec, versions)
        f.known_issue = dict(m.to_dict(), fix_note=note or None)
        kind = "known issue" if m.close else "closest known issue"  # a weak match is offered, not asserted
        ref = f"{kind} {rec['id']} ({rec['url']}, match {m.confidence:.2f}" + ("" if m.close else ", not certain") + ")"
        lead = f.generic or f.role == "wrapper" or f.family in ("reason", "cann-code", "acl-code", "torch-npu-code") \
            or (f.family == "python" and f.id.startswith("python-")) or m.confidence >= 0.8
        if lead and (m.confidence < 0.8 or (self._reason_rule_read(f) and not self._shares_reason(f, m))) \
                and self._phrase_explained(f):
            lead = False  # a message-family rule already reads this message: a thread match follows it
        comp = f.details.get("component") or {}
        if lead and not m.close and comp.get("feature") not in (None, "", comp.get("project")):
            lead = False  # raised inside a framework feature (components.toml): a loose thread match follows that reading
        if lead and self._other_code(f, rec):
            lead = False  # the catalogue's reading of this specific code leads a thread that never shows the code
        if lead:
            f.cause = ("" if m.close else "Perhaps: ") + f"{rec['cause']} ({ref}.) " + f.cause
            f.fix = ("" if m.close else "If it is that issue: ") + rec["fix"].rstrip(". ") + "." + (f" {note}" if note else "") \
                + " Otherwise: " + f.fix
        else:
            f.fix = f.fix.rstrip() + f" Also a {ref}: {rec['fix'].rstrip('. ')}." + (f" {note}" if note else "")
        f.base_confidence = max(f.base_confidence, round(0.5 + 0.4 * m.confidence, 2))


_WARNING_LINE = re.compile(r"\bWarning\b|\bWARNING\b|\bWARN\b|^\s*\[W[\s\]]|^\s*W\d{4} |\w+Warning:|\bCAUTION\b")
_ERROR_LINE = re.compile(r"\[ERROR\]|\bERROR\b|\b[A-Z]\w*Error\b|Traceback|\b[Ff]ailed\b|FAILED|\bfatal\b|Aborted|core dumped|"
                         r"Segmentation fault|\bKilled\b")


def _warning_only(f: Finding) -> None:
    """A known issue that stands as a log's only finding, read from lines that are all warnings (torch_npu's
    ``[W ...] Warning: CAUTION: The operator ... will fall back to run on the CPU``), is a warning, not an error:
    a log of warnings does not fail a CI gate."""
    if f.evidence and all(_WARNING_LINE.search(e.text) and not _ERROR_LINE.search(e.text) for e in f.evidence):
        f.severity = "warning"


def versions_source() -> str:
    from ascendify.kb.versions import SOURCE_MATRIX

    return SOURCE_MATRIX


def confidence(f: Finding) -> float:
    """How likely ``f`` is the root cause of the failure, 0–1 (docs/output.md).

    A heuristic score, not a calibrated probability: the base of the finding's
    kind (a verified catalogue signature 0.9, unverified 0.65, a catalogued CANN
    code 0.75, an ACL code 0.7, a numeric symptom its value in symptoms.toml,
    an unexplained Python exception 0.45, an uncatalogued code 0.45–0.5), times
    0.35 for a consequence linked to an earlier failure (0.6 unlinked), 0.4 for
    a wrapper, 0.8 for a warning.
    """
    c = f.base_confidence
    if f.role == "consequence":
        c *= 0.35 if f.consequence_of else 0.6
    elif f.role == "wrapper":
        c *= 0.4
    if f.severity == "warning":
        c *= 0.8
    return round(max(0.01, min(0.99, c)), 2)


INCIDENT_GAP = 3600.0
"""Seconds between the time spans of two job folders above which they are separate incidents (about twice
HCCL's default execution timeout of 1836 s, the longest a rank of one job waits for another: a heuristic)."""
PROBE_BYTES = 64 << 10
_JOB_PART = re.compile(r"^(?:(?:rank|worker|proc|node|device|dev|npu)[_-]?\d{1,5}|plog|device|run|debug|logs?)$", re.IGNORECASE)


def job_folder(path: str) -> str:
    """The folder of the job a log belongs to: its folder with trailing per-rank / per-device / CANN log-layout
    parts dropped (``logs/worker-3/out.log`` and ``logs/rank_1.log`` → ``logs``; ``ascend/log/debug/plog/plog-1.log``
    and ``ascend/log/debug/device-0/device-1.log`` → ``ascend``)."""
    if path == "-":
        return "-"
    parts = os.path.normpath(os.path.dirname(os.path.abspath(path))).split(os.sep)
    while len(parts) > 1 and _JOB_PART.match(parts[-1]):
        parts.pop()
    return os.sep.join(parts) or os.sep


def time_span(path: str) -> Optional[tuple]:
    """``(first, last)`` timestamps of a plain log file from its first and last :data:`PROBE_BYTES`, or None
    (stdin, a compressed file, no full-date timestamp)."""
    if path == "-" or path.endswith(".gz"):
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(PROBE_BYTES)
            size = os.fstat(fh.fileno()).st_size
            if size > PROBE_BYTES:
                fh.seek(max(PROBE_BYTES, size - PROBE_BYTES))
                tail = fh.read(PROBE_BYTES)
            else:
                tail = head
    except OSError:
        return None
    first = _first_ts(head)
    last = _ts(tail, 0, len(tail))
    if first is None or last is None:
        return None
    return (min(first, last), max(first, last))


_TS_FULL = re.compile(rb"(\d{4})-(\d\d)-(\d\d)[- T](\d\d):(\d\d):(\d\d)")


def _first_ts(buf: bytes) -> Optional[float]:
    m = _TS_FULL.search(buf)
    if m is None:
        return None
    try:
        return datetime(*(int(g) for g in m.groups())).timestamp()
    except ValueError:
        return None


def incident_groups(files: list) -> list:
    """``[[file, ...], ...]``: the inputs split into separate incidents.  Files of one job folder
    (:func:`job_folder`) are one incident; two job folders are separate incidents only when both show
    timestamps and their time spans are more than :data:`INCIDENT_GAP` apart (when in doubt, one incident:
    a job's rank logs must never be split)."""
    order, by_folder = [], {}
    for f in files:
        k = job_folder(f)
        if k not in by_folder:
            by_folder[k] = []
            order.append(k)
        by_folder[k].append(f)
    if len(order) < 2:
        return [list(files)]
    spans = {}
    for k in order:
        ss = [time_span(f) for f in by_folder[k]]
        spans[k] = None if any(s is None for s in ss) else (min(s[0] for s in ss), max(s[1] for s in ss))
    parent = {k: k for k in order}

    def root(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for i, a in enumerate(order):
        for b in order[i + 1:]:
            sa, sb = spans[a], spans[b]
            apart = sa is not None and sb is not None and (sb[0] - sa[1] > INCIDENT_GAP or sa[0] - sb[1] > INCIDENT_GAP)
            if not apart:
                parent[root(b)] = root(a)
    groups: dict = {}
    for f in files:
        groups.setdefault(root(job_folder(f)), []).append(f)
    return [groups[k] for k in order if k in groups]


def diagnose(paths: tuple, kb: Optional[KnowledgeBase] = None, chip: Optional[str] = None,
             torch_npu: Optional[str] = None) -> Report:
    """Diagnose log files / folders / ``-``.  ``chip`` (soc_version or family) and
    ``torch_npu`` (version) override what the log shows.  Raises
    ``AscendifyError`` for a missing path or an unknown chip; unreadable or
    binary files become notes.  Inputs that are separate incidents (:func:`incident_groups`) are diagnosed
    each on its own: the report lists their findings incident by incident (``Report.incidents``)."""
    kb = kb or load()
    Context(chip=chip, torch_npu=torch_npu)  # an unknown --chip is reported before a missing path
    files, notes = expand_inputs(paths)
    if not files:
        raise AscendifyError("no log files found in " + ", ".join(paths) + " (expected *.log files, rank log folders, plog folders or '-')")
    groups = incident_groups(files)
    parts = [_diagnose_files(g, kb, chip, torch_npu) for g in groups]
    parts.sort(key=lambda r: not r.errors)  # incidents with errors first, else in input order
    if len(parts) == 1:
        rep = parts[0]
        rep.notes = notes + rep.notes
        return rep
    findings, stats, pnotes = [], [], list(notes)
    for i, rep in enumerate(parts, 1):
        for f in rep.findings:
            f.incident = i
        findings += rep.findings
        stats += rep.files
        pnotes += rep.notes
    return Report(findings, stats, pnotes, parts[0].context, incidents=parts)


def _diagnose_files(files: list, kb: KnowledgeBase, chip: Optional[str], torch_npu: Optional[str]) -> Report:
    ctx = Context(chip=chip, torch_npu=torch_npu)
    notes: list = []
    scanner = Scanner(Matcher(kb), context=ctx)
    agg = Aggregator(kb, context=ctx)
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
        agg.end_file(name)
        if stats.skipped:
            notes.append(f"{name}: {stats.skipped}; skipped (expected a text log)")
        elif stats.bytes == 0:
            notes.append(f"{name}: empty file")
    if files and all(s.skipped or s.bytes == 0 for s in stats_all) and not agg.findings:
        notes.append("no readable log text in the inputs")
    agg.paste = scanner.paste
    findings = agg.result()
    return Report(findings, stats_all, notes, ctx.to_dict())
