"""The error-signature knowledge base of ``ascendify diagnose`` (``data/signatures.toml``).

Matching is two-stage so that multi-GB logs stay linear-time:

1. one *trigger* pattern — the ``[scanner] anchors`` of the data file (short
   substrings that every signature literal contains, checked on load),
   factored into a prefix trie, plus the code shapes ``E<module><4 digits>``
   and ``ERR<5 digits>`` — is searched over whole 1 MiB blocks of bytes
   (:mod:`ascendify.diagnose.scanner`);
2. only the lines it hits are decoded and run through :meth:`Matcher.match_line`.

Every regular expression is applied to one line (at most ``MAX_LINE`` chars)
and is checked on load for nested quantifiers, the shape behind catastrophic
backtracking.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROLES = ("cause", "wrapper", "consequence")
SEVERITIES = ("error", "warning")
MAX_LINE = 8192
"""Characters of a line that are matched and kept as evidence (the rest is cut)."""

CODE_RE = re.compile(r"\b(E[0-9A-Z][0-9]{4})\b")
"""A CANN error code; only codes whose module character is in ``[cann_modules]`` are reported."""
ERR_RE = re.compile(r"\bERR(\d{2})(\d{3})\b(?: (\w+))?")
ACL_RE = re.compile(r"(?:error code is|error no is|error code:|ret ?= ?|retCode ?= ?|errno ?= ?) ?(\d{6})\b")


@dataclass(frozen=True)
class Signature:
    """One known error message (see the header of ``signatures.toml`` for the fields)."""

    id: str
    family: str
    title: str
    severity: str
    role: str
    any: tuple
    cause: str
    fix: str
    next_step: str
    source: str
    also_any: tuple = ()
    ignore_case: bool = False
    regex: Optional[re.Pattern] = None
    key: str = ""
    key_required: bool = True
    require: Optional[re.Pattern] = None
    handler: str = ""
    codes: tuple = ()
    rules: tuple = ()
    rule_by_key: tuple = ()  # ((key value, rule code), ...)
    verified: bool = True

    def rules_for(self, key: str) -> tuple:
        """Scan-rule codes for a finding with ``key``."""
        extra = tuple(code for k, code in self.rule_by_key if k == key)
        return self.rules + extra

    def hit(self, line: str, low: Optional[str] = None) -> bool:
        if self.ignore_case:
            low = low if low is not None else line.lower()
            return any(s.lower() in low for s in self.any) and (
                not self.also_any or any(s.lower() in low for s in self.also_any)
            )
        return any(s in line for s in self.any) and (not self.also_any or any(s in line for s in self.also_any))


@dataclass(frozen=True)
class CodeEntry:
    """A catalogue entry for a CANN code (``E...``) or a numeric ACL code."""

    first: Any
    last: Any
    title: str
    role: str
    fix: str = ""


@dataclass
class KnowledgeBase:
    signatures: list
    cann_codes: list
    acl_codes: list
    cann_modules: dict
    torch_npu_submodules: dict
    torch_npu_codes: dict
    trigger: re.Pattern = field(repr=False, default=None)
    anchors: tuple = ()

    def cann_code(self, code: str) -> tuple[str, str, str]:
        """``(title, role, fix)`` for a code like ``EZ9999``; unknown codes get their module name."""
        for e in self.cann_codes:
            if e.first[:2] == code[:2] and e.first <= code <= e.last:
                return e.title, e.role, e.fix
        module = self.cann_modules.get(code[1], "unknown module")
        role = "wrapper" if code[2:].startswith("9") else "cause"
        kind = "inner error" if role == "wrapper" else "error"
        return f"{module} {kind}", role, ""

    def acl_code(self, code: int) -> Optional[tuple[str, str]]:
        """``(title, role)`` for a 6-digit aclError / aclnn code, or None when not catalogued."""
        for e in self.acl_codes:
            if e.first <= code <= e.last:
                return e.title, e.role
        return None


_NESTED = re.compile(r"\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)[+*{]")


def check_pattern(pattern: str) -> None:
    """Raise ``ValueError`` if ``pattern`` repeats a group that itself holds a
    quantifier (``(a+)+``, ``(?:x*y)*``): the shape of catastrophic backtracking."""
    if _NESTED.search(pattern):
        raise ValueError(f"nested quantifier in signature pattern {pattern!r}")


def _compile(pattern: Optional[str]) -> Optional[re.Pattern]:
    if not pattern:
        return None
    check_pattern(pattern)
    return re.compile(pattern)


def _range(entry: dict, conv) -> tuple:
    if "code" in entry:
        return conv(entry["code"]), conv(entry["code"])
    return conv(entry["first"]), conv(entry["last"])


_CODE_SHAPE = re.compile(r"E[0-9A-Z][0-9]{4}|ERR[0-9]{5}|^E[0-9A-Z][0-9]{2,3}$")
"""Literals the trigger's code pattern already finds (a code, or a code prefix
such as ``E100`` whose signature regex requires the whole code)."""
_GENERIC_CONTEXTS = ("error code is", "error no is", "error code:", "ret=", "ret =", "retCode=", "errno=")
"""Texts before a numeric ACL code (see ``ACL_RE``); the anchors must cover them."""


def _trie(words: list) -> bytes:
    """A regex (bytes) for the alternation of ``words``, factored by common
    prefixes: at each position the engine then tests one branch per distinct
    first byte instead of one per word (≈30× faster for ~50 words)."""
    if any(w == b"" for w in words):
        return b""  # a shorter word is a prefix of the others: it alone suffices
    groups: dict = {}
    for w in words:
        groups.setdefault(w[:1], []).append(w[1:])
    parts = []
    for c, rest in sorted(groups.items()):
        sub = _trie(rest)
        parts.append(re.escape(c) + (b"(?:" + sub + b")" if sub else b""))
    return b"|".join(parts)


def _check_anchors(anchors: list, signatures: list) -> None:
    """Every literal a signature needs (and every ACL-code context) must contain an anchor."""
    needed = [(s.id, x) for s in signatures for x in s.any if not _CODE_SHAPE.search(x)]
    needed += [(s.id, v) for s in signatures if s.ignore_case for x in s.any for v in (x.lower(), x.upper(), x.capitalize())]
    needed += [("acl-code", x) for x in _GENERIC_CONTEXTS]
    for sid, lit in needed:
        if not any(a in lit for a in anchors):
            raise ValueError(f"signature {sid}: literal {lit!r} contains no [scanner] anchor; add one")


def _build_trigger(anchors: list) -> re.Pattern:
    return re.compile(_trie(sorted({a.encode() for a in anchors})) + rb"|E[0-9A-Z][0-9]{4}|ERR[0-9]{5}")


def parse(data: dict) -> KnowledgeBase:
    """Build a :class:`KnowledgeBase` from the TOML document; ``ValueError`` on bad data."""
    sigs = []
    seen = set()
    for raw in data.get("signature", []):
        sid = raw.get("id", "?")
        if sid in seen:
            raise ValueError(f"duplicate signature id {sid}")
        seen.add(sid)
        for f in ("family", "title", "severity", "role", "any", "cause", "fix", "next_step", "source"):
            if not raw.get(f):
                raise ValueError(f"signature {sid}: missing {f}")
        if raw["role"] not in ROLES or raw["severity"] not in SEVERITIES:
            raise ValueError(f"signature {sid}: bad role or severity")
        rx = None
        if raw.get("regex"):
            check_pattern(raw["regex"])
            rx = re.compile(raw["regex"])
            if raw.get("key") and raw["key"] not in rx.groupindex:
                raise ValueError(f"signature {sid}: key {raw['key']} is not a group of its regex")
        sigs.append(
            Signature(
                id=sid, family=raw["family"], title=raw["title"], severity=raw["severity"], role=raw["role"],
                any=tuple(raw["any"]), also_any=tuple(raw.get("also_any", ())), ignore_case=bool(raw.get("ignore_case")),
                regex=rx, key=raw.get("key", ""), key_required=bool(raw.get("key_required", True)),
                require=_compile(raw.get("require")), handler=raw.get("handler", ""), codes=tuple(str(c) for c in raw.get("codes", ())),
                cause=raw["cause"], fix=raw["fix"], next_step=raw["next_step"],
                rules=tuple([raw["rule"]] if isinstance(raw.get("rule"), str) and raw["rule"] else raw.get("rule") or ()),
                rule_by_key=tuple(sorted(raw.get("rule_by_key", {}).items())),
                source=raw["source"], verified=bool(raw.get("verified", True)),
            )
        )
    cann = [CodeEntry(*_range(e, str), e["title"], e["role"], e.get("fix", "")) for e in data.get("cann_code", [])]
    acl = [CodeEntry(*_range(e, int), e["title"], e["role"]) for e in data.get("acl_code", [])]
    for e in cann + acl:
        if e.role not in ROLES:
            raise ValueError(f"code {e.first}: bad role {e.role}")
    kb = KnowledgeBase(
        signatures=sigs, cann_codes=cann, acl_codes=acl, cann_modules=dict(data.get("cann_modules", {})),
        torch_npu_submodules=dict(data.get("torch_npu_submodules", {})), torch_npu_codes=dict(data.get("torch_npu_codes", {})),
    )
    anchors = list(data.get("scanner", {}).get("anchors", []))
    _check_anchors(anchors, sigs)
    kb.anchors = tuple(anchors)
    kb.trigger = _build_trigger(anchors)
    return kb


@lru_cache(maxsize=1)
def load() -> KnowledgeBase:
    """The packaged knowledge base (``ascendify/diagnose/data/signatures.toml``)."""
    text = resources.files("ascendify.diagnose").joinpath("data").joinpath("signatures.toml").read_text(encoding="utf-8")
    return parse(tomllib.loads(text))


@dataclass
class LineMatch:
    """What one line says: signature hits and generic codes."""

    signatures: list  # [(Signature, groupdict)]
    cann_codes: list  # [code]
    acl_codes: list  # [int]
    err_codes: list  # [(ss, ccc, submodule_word)]


class Matcher:
    """Match decoded lines against a :class:`KnowledgeBase`."""

    def __init__(self, kb: Optional[KnowledgeBase] = None):
        self.kb = kb or load()

    def match_line(self, line: str) -> Optional[LineMatch]:
        """Return the :class:`LineMatch` of ``line`` (``str``, one line), or None."""
        line = line[:MAX_LINE]
        low = None
        sig_hits = []
        claimed = set()
        for s in self.kb.signatures:
            if s.ignore_case and low is None:
                low = line.lower()
            if not s.hit(line, low):
                continue
            if s.require is not None and s.require.search(line) is None:
                continue
            groups: dict = {}
            if s.regex is not None:
                m = s.regex.search(line)
                if m is None and s.key and s.key_required:
                    continue  # the signature needs its key (e.g. the op name)
                if m is not None:
                    groups = {k: v for k, v in m.groupdict().items() if v is not None}
            sig_hits.append((s, groups))
            claimed.update(s.codes)
            if "code" in groups:
                claimed.add(groups["code"])
        cann = [c for c in dict.fromkeys(CODE_RE.findall(line)) if c not in claimed and c[1] in self.kb.cann_modules]
        acl = [int(c) for c in dict.fromkeys(ACL_RE.findall(line)) if c not in claimed]
        err = [(m.group(1), m.group(2), m.group(3) or "") for m in ERR_RE.finditer(line)]
        if not (sig_hits or cann or acl or err):
            return None
        return LineMatch(sig_hits, cann, acl, err)
