"""The error-signature knowledge base of ``ascendify diagnose``.

Data: ``data/signatures.toml`` (hand-written signatures, the code-range
fallbacks, module names) plus every ``data/catalogue/*.toml`` (the catalogue:
generated code entries and hand-written message / environment entries); all
files share the ``[[signature]]`` schema documented at the top of
``signatures.toml``.  Catalogue entries that name ``on_code`` are looked up by
the code found on a line (a dict look-up, not a scan over all entries).

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

CODE_RE = re.compile(r"(?:\b|(?<=\\[nt]))(E[0-9A-Z][0-9]{4})\b")
"""A CANN error code; only codes whose module character is in ``[cann_modules]`` are reported.
A code right after a literal ``\\n`` / ``\\t`` counts too (error text pasted as an escaped JSON string)."""
ERR_RE = re.compile(r"\bERR(\d{2})(\d{3})\b(?: (\w+))?")
ALL_CODES = "*"
"""``codes = ["*"]``: the signature explains every code on its line (no generic code finding for them)."""
ACL_RE = re.compile(r"(?:error code is|error no is|error code:|error code(?= \d{6}\b)|runtime result ?= ?|ret ?= ?|retCode ?= ?|errno ?= ?|"
                    r"(?:CANN|ACL) failure:? ?) ?(\d{6})\b")
ACL_NAME_RE = re.compile(r"\b(ACL_ERROR_[A-Z0-9_]{3,60}|ACLNN_ERR_[A-Z0-9_]{3,60})\b")
"""A symbolic aclError name (``ACL_ERROR_REPEAT_INITIALIZE``) printed without or beside its number (onnxruntime's
CANN EP prints ``CANN failure 100002: ACL_ERROR_REPEAT_INITIALIZE``): read as its code (titles of the catalogue's
ACL entries name both)."""
_ACL_TITLE_NAME = re.compile(r"\b([1-5]\d{5})\b\D{0,4}\b((?:ACL_ERROR|ACLNN_ERR)_[A-Z0-9_]+)\b")


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
    on_code: tuple = ()  # codes (E-code, 6-digit ACL code, ERR<5 digits>) that trigger this entry by look-up
    examples: tuple = ()  # log lines this entry must match first (tests)
    priority: int = 0  # hits on one line are ordered by priority (higher first), then by load order
    supersedes: tuple = ()  # ids of generic signatures dropped from a line this one matches
    message: str = ""  # the upstream message template (documentation)
    reason: str = ""  # why the entry is unverified (verified = false)
    origin: str = ""  # data file the entry comes from
    variants: tuple = ()  # ((when_any, title, cause, fix), ...): readings chosen by other lines of the same log

    def hit(self, line: str, low: Optional[str] = None) -> bool:
        if not self.any:
            return False
        return self._hit(line, low)

    def rules_for(self, key: str) -> tuple:
        """Scan-rule codes for a finding with ``key``."""
        extra = tuple(code for k, code in self.rule_by_key if k == key)
        return self.rules + extra

    def _hit(self, line: str, low: Optional[str] = None) -> bool:
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
    _acl_names: Optional[dict] = field(repr=False, default=None)

    def cann_code(self, code: str) -> tuple[str, str, str]:
        """``(title, role, fix)`` for a code like ``EZ9999``; unknown codes get their module name."""
        for e in self.cann_codes:
            if e.first[:2] == code[:2] and e.first <= code <= e.last:
                return e.title, e.role, e.fix
        module = self.cann_modules.get(code[1], "unknown module")
        role = "wrapper" if code[2:].startswith("9") else "cause"
        kind = "inner error" if role == "wrapper" else "error"
        return f"{module} {kind}", role, ""

    def acl_names(self) -> dict:
        """``{"ACL_ERROR_REPEAT_INITIALIZE": "100002", ...}``: the symbolic names the catalogue's ACL titles give their
        codes (built on first use: only a line that prints such a name needs it)."""
        if self._acl_names is None:
            names: dict = {}
            titles = [s.title for s in self.signatures] + [f"{e.first} {e.title}" for e in self.acl_codes]
            for t in titles:
                for code, name in _ACL_TITLE_NAME.findall(t):
                    names.setdefault(name, code)
            self._acl_names = names
        return self._acl_names

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
_GENERIC_CONTEXTS = ("error code is", "error no is", "error code:", "runtime result =", "ret=", "ret =", "retCode=", "errno=",
                     "CANN failure", "ACL failure")
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


_ON_CODE = re.compile(r"E[0-9A-Z][0-9]{4}|[1-5][0-9]{5}|ERR[0-9]{5}")
"""Shapes an ``on_code`` value may have: a CANN E-code, a 6-digit ACL code, a torch_npu ERR code."""
_URL = re.compile(r"https?://\S+")


def _check_source(sid: str, raw: dict) -> None:
    """A catalogue entry cites a public URL, or is ``verified = false`` with a ``reason``."""
    if _URL.search(raw.get("source", "")):
        return
    if raw.get("verified", True) is False and raw.get("reason"):
        return
    raise ValueError(f"signature {sid}: source has no public URL (give one, or set verified = false and a reason)")


def parse(data: dict, strict: bool = False) -> KnowledgeBase:
    """Build a :class:`KnowledgeBase` from one TOML document (or several merged
    by :func:`merge`); ``ValueError`` on bad data.  ``strict`` (the complete
    packaged data): every signature must cite a URL (see :func:`_check_source`)
    and every ``supersedes`` id must exist."""
    sigs = []
    seen: dict = {}
    code_owner: dict = {}
    for raw in data.get("signature", []):
        sid = raw.get("id", "?")
        where = f" ({raw['_origin']})" if raw.get("_origin") else ""
        if sid in seen:
            raise ValueError(f"duplicate signature id {sid}{where} (also in {seen[sid] or 'the same file'})")
        seen[sid] = raw.get("_origin", "")
        required = ["family", "title", "severity", "role", "cause", "fix", "next_step", "source"]
        if not raw.get("on_code"):
            required.append("any")
        for f in required:
            if not raw.get(f):
                raise ValueError(f"signature {sid}{where}: missing {f}")
        if raw["role"] not in ROLES or raw["severity"] not in SEVERITIES:
            raise ValueError(f"signature {sid}{where}: bad role or severity")
        if strict:
            _check_source(sid + where, raw)
        for c in raw.get("on_code", ()):
            if not _ON_CODE.fullmatch(str(c)):
                raise ValueError(f"signature {sid}{where}: on_code {c!r} is not an E-code, a 6-digit ACL code or ERR<5 digits>")
            if str(c) in code_owner:
                raise ValueError(f"signature {sid}{where}: on_code {c} is already claimed by {code_owner[str(c)]}")
            code_owner[str(c)] = sid
        examples = raw.get("example", ())
        if isinstance(examples, str):
            examples = [examples]
        rx = None
        if raw.get("regex"):
            check_pattern(raw["regex"])
            rx = re.compile(raw["regex"])
            if raw.get("key") and raw["key"] not in rx.groupindex:
                raise ValueError(f"signature {sid}{where}: key {raw['key']} is not a group of its regex")
        sigs.append(
            Signature(
                id=sid, family=raw["family"], title=raw["title"], severity=raw["severity"], role=raw["role"],
                any=tuple(raw.get("any", ())), also_any=tuple(raw.get("also_any", ())), ignore_case=bool(raw.get("ignore_case")),
                regex=rx, key=raw.get("key", ""), key_required=bool(raw.get("key_required", True)),
                require=_compile(raw.get("require")), handler=raw.get("handler", ""), codes=tuple(str(c) for c in raw.get("codes", ())),
                cause=raw["cause"], fix=raw["fix"], next_step=raw["next_step"],
                rules=tuple([raw["rule"]] if isinstance(raw.get("rule"), str) and raw["rule"] else raw.get("rule") or ()),
                rule_by_key=tuple(sorted(raw.get("rule_by_key", {}).items())),
                source=raw["source"], verified=bool(raw.get("verified", True)),
                on_code=tuple(str(c) for c in raw.get("on_code", ())), examples=tuple(examples),
                priority=int(raw.get("priority", 0)), supersedes=tuple(raw.get("supersedes", ())),
                message=raw.get("message", ""), reason=raw.get("reason", ""), origin=raw.get("_origin", ""),
                variants=tuple((tuple(v.get("when_any", ())), v.get("title", ""), v.get("cause", ""), v.get("fix", ""))
                               for v in raw.get("variant", ())),
            )
        )
    for s in sigs if strict else ():
        for other in s.supersedes:
            if other not in seen:
                raise ValueError(f"signature {s.id}: supersedes unknown signature {other}")
    cann = [CodeEntry(*_range(e, str), e["title"], e["role"], e.get("fix", "")) for e in data.get("cann_code", [])]
    acl = [CodeEntry(*_range(e, int), e["title"], e["role"]) for e in data.get("acl_code", [])]
    for e in cann + acl:
        if e.role not in ROLES:
            raise ValueError(f"code {e.first}: bad role {e.role}")
    kb = KnowledgeBase(
        signatures=sigs, cann_codes=cann, acl_codes=acl, cann_modules=dict(data.get("cann_modules", {})),
        torch_npu_submodules=dict(data.get("torch_npu_submodules", {})), torch_npu_codes=dict(data.get("torch_npu_codes", {})),
    )
    anchors = list(dict.fromkeys(data.get("scanner", {}).get("anchors", [])))
    _check_anchors(anchors, sigs)
    kb.anchors = tuple(anchors)
    kb.trigger = _build_trigger(anchors)
    return kb


CATALOGUE_DIR = "catalogue"


def merge(docs: list) -> dict:
    """Merge TOML documents ``[(name, dict), ...]``: ``signature`` lists are
    concatenated (each entry remembers its file in ``_origin``), ``[scanner]
    anchors`` are united; the other tables come from the first document that has them."""
    out: dict = {"signature": [], "scanner": {"anchors": []}}
    for name, doc in docs:
        for raw in doc.get("signature", []):
            out["signature"].append(dict(raw, _origin=name))
        out["scanner"]["anchors"] += list(doc.get("scanner", {}).get("anchors", []))
        for k, v in doc.items():
            if k not in ("signature", "scanner") and k not in out:
                out[k] = v
    return out


def data_files() -> list:
    """``[(name, text)]`` of the packaged data: ``signatures.toml`` then ``catalogue/*.toml`` in name order."""
    root = resources.files("ascendify.diagnose").joinpath("data")
    files = [("signatures.toml", root.joinpath("signatures.toml").read_text(encoding="utf-8"))]
    cat = root.joinpath(CATALOGUE_DIR)
    if cat.is_dir():
        for f in sorted(cat.iterdir(), key=lambda p: p.name):
            if f.name.endswith(".toml"):
                files.append((f"{CATALOGUE_DIR}/{f.name}", f.read_text(encoding="utf-8")))
    return files


@lru_cache(maxsize=1)
def load() -> KnowledgeBase:
    """The packaged knowledge base (``signatures.toml`` + ``catalogue/*.toml``); every entry must cite a URL."""
    docs = []
    for name, text in data_files():
        try:
            docs.append((name, tomllib.loads(text)))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"diagnose data {name}: {exc}") from None
    return parse(merge(docs), strict=True)


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
        self.text_sigs = [s for s in self.kb.signatures if s.any]
        self.by_code: dict = {}
        for s in self.kb.signatures:
            for c in s.on_code:
                self.by_code.setdefault(c, []).append(s)
        self.has_order = any(s.priority or s.supersedes for s in self.kb.signatures)

    def _try(self, s: Signature, line: str, sig_hits: list, claimed: set, explained: set, code: str = "") -> bool:
        """Add ``s`` to ``sig_hits`` if its require / regex / key conditions hold; ``code``: the code
        that triggered an ``on_code`` entry (given to the engine as the ``code`` detail)."""
        if s.require is not None and s.require.search(line) is None:
            return False
        groups: dict = {"code": code} if code else {}
        if s.regex is not None:
            m = s.regex.search(line)
            if m is None and s.key and s.key_required:
                return False  # the signature needs its key (e.g. the op name)
            if m is not None:
                groups.update({k: v for k, v in m.groupdict().items() if v is not None})
        sig_hits.append((s, groups))
        explained.update(s.codes)
        explained.update(s.on_code)
        if "code" in groups:
            claimed.add(groups["code"])  # not repeated as a generic code finding; a catalogue entry may still explain it
        return True

    def match_line(self, line: str) -> Optional[LineMatch]:
        """Return the :class:`LineMatch` of ``line`` (``str``, one line), or None."""
        line = line[:MAX_LINE]
        low = None
        sig_hits: list = []
        claimed: set = set()
        explained: set = set()
        for s in self.text_sigs:
            if s.ignore_case and low is None:
                low = line.lower()
            if s.hit(line, low):
                self._try(s, line, sig_hits, claimed, explained)
        if ALL_CODES in explained:  # a signature explains every code of its line (e.g. a benign line)
            return LineMatch(self._order(sig_hits), [], [], []) if sig_hits else None
        state = (line, sig_hits, claimed, explained)
        cann = [c for c in self._uncatalogued(((c, c) for c in dict.fromkeys(CODE_RE.findall(line))), *state)
                if c[1] in self.kb.cann_modules]
        found = ACL_RE.findall(line)
        if "ACL" in line:
            names = ACL_NAME_RE.findall(line)
            if names:
                known = self.kb.acl_names()
                found += [known[n] for n in names if n in known]
        acl = self._uncatalogued(((c, int(c)) for c in dict.fromkeys(found)), *state)
        err = self._uncatalogued((("ERR" + m.group(1) + m.group(2), (m.group(1), m.group(2), m.group(3) or ""))
                                  for m in ERR_RE.finditer(line)), *state)
        sig_hits = self._order(sig_hits)
        if not (sig_hits or cann or acl or err):
            return None
        return LineMatch(sig_hits, cann, acl, err)

    def _uncatalogued(self, codes, line: str, sig_hits: list, claimed: set, explained: set) -> list:
        """For the (code, item) pairs of a line, in order: try each code's catalogue entries;
        return the items of the codes that no entry explains and no hit claims."""
        out = []
        for code, item in codes:
            if code in explained:
                continue
            if code in self.by_code:
                for s in self.by_code[code]:
                    self._try(s, line, sig_hits, claimed, explained, code)
            elif code not in claimed:
                out.append(item)
        return out

    def _order(self, sig_hits: list) -> list:
        """Drop hits another hit of the line supersedes; order the rest by priority (stable)."""
        if self.has_order and len(sig_hits) > 1:
            dropped = {x for s, _ in sig_hits for x in s.supersedes}
            sig_hits = sorted((h for h in sig_hits if h[0].id not in dropped), key=lambda h: -h[0].priority)
        return sig_hits


def catalogue_rows(kb: Optional[KnowledgeBase] = None) -> list:
    """One dict per entry for ``ascendify diagnose --list``: id, family, title,
    role, severity, codes (``on_code``), source URLs, verified, data file."""
    kb = kb or load()
    return [
        {"id": s.id, "family": s.family, "title": s.title, "role": s.role, "severity": s.severity, "codes": list(s.on_code),
         "source": _URL.findall(s.source) or [s.source], "verified": s.verified, "file": s.origin}
        for s in kb.signatures
    ]


def render_catalogue_list(kb: Optional[KnowledgeBase] = None, width: Optional[int] = None) -> str:
    """The text form of ``--list``: one entry per line (id, family, title, first source), then counts per family.
    An entry wider than ``width`` (default: :func:`ascendify.termtable.report_width`) has its title wrapped
    (after the id and family, padded to columns when they take at most half the width) and its source on
    the next line, indented and never cut."""
    from ascendify.termtable import report_width, wrap_prose

    width = width or report_width()
    rows = catalogue_rows(kb)
    out = []
    for r in rows:
        mark = "" if r["verified"] else " (unverified)"
        head = f"{r['id']:<34} {r['family']:<15} "
        line = f"{head}{r['title']}{mark}  <{r['source'][0]}>"
        if len(line) <= width:
            out.append(line)
            continue
        lead = head if len(head) <= width // 2 else f"{r['id']} {r['family']} "
        out.extend(wrap_prose(f"{r['title']}{mark}", width, initial=lead, subsequent=" " * min(len(lead), width // 2)))
        out.append(f"    <{r['source'][0]}>")
    fams: dict = {}
    for r in rows:
        fams[r["family"]] = fams.get(r["family"], 0) + 1
    out.append("")
    counts = f"{len(rows)} entries: " + ", ".join(f"{f} {n}" for f, n in sorted(fams.items(), key=lambda x: (-x[1], x[0])))
    out.extend(wrap_prose(counts, width))
    return "\n".join(out) + "\n"
