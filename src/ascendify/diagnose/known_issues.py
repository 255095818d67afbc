"""Known issues: resolved public threads, matched against a log by retrieval.

Data: ``data/known_issues/<project>.jsonl``, one JSON object a line (the
record shape is :data:`FIELDS`; :func:`validate` checks it).  Each record
quotes the key log lines of its thread verbatim; a log is matched against
those quotes and the title, not against the record's own words, so a log that
says the same thing with other numbers, paths, ranks or a slightly different
wording still finds it.

Retrieval is Okapi BM25 over *normalised* tokens (:func:`normalise` masks
numbers, hex, paths, IPs/ports, PIDs, timestamps and ranks; error codes such as
``EZ9999``, ``ERR01100`` and the code after ``error code is`` are kept as
tokens).  The score of a record is divided by the score its own quote would get
(the best possible), so ``confidence`` reads as "how much of the issue's
distinctive wording the log contains", 0–1; a match needs :data:`MIN_CONFIDENCE`,
:data:`MIN_TERMS` distinctive terms in common and a lead over the next record
of another cause (:data:`MARGIN`).  Codes must agree: a record about specific
error codes (its title and quotes name 507035, not only wrappers such as EZ9999;
:func:`generic_code`, classified when the index is built) is no match for a log
that shows codes, none of them the record's.  Subjects must agree too: a quote
about ``No module named 'X'`` (or a missing attribute, import name, undefined
symbol or shared library; :func:`subjects_of`) is no match for a log line of
the same template about another ``X``.

Why our own ~60 lines of BM25 and not a library: ``diagnose`` is part of the
core install, whose dependencies are click, rich and libcst; the maintained
BM25 packages (``rank_bm25``, ``bm25s``) pull in numpy (and scipy), and the
corpus is a few thousand short documents, for which a dict of postings is
fast enough (a query is well under a millisecond per hundred records).

The derived index (``data/known_issues/_index.json``: records, postings,
document lengths, IDF, and the SHA-256 of the ``.jsonl`` files and of the
catalogue it was built from) is written by ``tools/diagnose_known_issues.py`` and loaded lazily on the
first query; when it is missing or older than the data files, the index is
built in memory from the ``.jsonl`` files instead (same result, slower).

``ASCENDIFY_KI_EXCLUDE_URLS`` (comma-separated URLs): records with those URLs
are left out of matching (leave-one-out evaluation: a log must not be matched
to the very thread it was taken from).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Iterable, Optional

from ascendify.diagnose import reason as reason_mod

DATA_DIR = "known_issues"
INDEX_NAME = "_index.json"
INDEX_VERSION = 7
FIELDS = ("id", "project", "url", "date", "title", "quote", "affected", "fixed_in", "cause", "fix", "framework", "resolution")
REQUIRED = ("id", "project", "url", "date", "title", "quote", "cause", "fix", "resolution")
FRAMEWORKS = ("vllm", "mindspeed", "mindie", "llamafactory", "ms-swift", "lmdeploy", "sglang", "deepspeed", "triton-ascend",
              "torch_npu", "cann", "hccl", "container")
RESOLUTIONS = ("maintainer", "merged-pr", "reporter-confirmed", "faq", "forum")
EXCLUDE_ENV = "ASCENDIFY_KI_EXCLUDE_URLS"

K1 = 1.2
B = 0.75
MIN_CONFIDENCE = 0.5
"""Share of a record's own best score the log must reach."""
MIN_TERMS = 3
"""Distinctive terms (IDF above :data:`COMMON_IDF`) the log and the record must share."""
COMMON_IDF = 1.0
MARGIN = 0.0
"""Lead the best record needs over the next one with a different fix (0: ties go to the first)."""

_URL_SHAPE = re.compile(r"^https?://[^\s/]+\.[^\s/]+/\S*$")
_DATE = re.compile(r"^\d{4}-\d\d(?:-\d\d)?$")


# ---------------------------------------------------------------- normalising

_MASKS = [
    (re.compile(r"https?://\S+"), " "),
    (re.compile(r"\b\d{4}-\d\d-\d\d[- T]\d\d:\d\d:\d\d(?:[.,:]\d{1,9}){0,3}"), " "),  # timestamps
    (re.compile(r"\b\d\d:\d\d:\d\d(?:[.,]\d{1,9})?"), " "),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b"), " ipaddr "),
    (re.compile(r"\[?\b(?:pid|tid|PID|TID|Pid)\s*[:=]?\s*\d+\]?"), " "),
    (re.compile(r"\b(?:rank|Rank|RANK|RankID|rankId|device|Device|DEVICE)\s*[:=_]?\s*-?\d+"), " "),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), " hex "),
    (re.compile(r"\b[0-9a-f]{8,}\b"), " hex "),
]
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.+-]*/)+([\w.+-]+)")
_CODE_NUM = re.compile(r"(?:error code is|error code:|ret(?:code)?\s*[=:]|errno\s*[=:]|code\s*[=:]|error\s*=)\s*(-?\d{3,6})\b",
                       re.IGNORECASE)
_KEEP = re.compile(r"\b(E[0-9A-Z]\d{4}|ERR\d{5}|EI\d{4}|EL\d{4})\b")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_TOKEN = re.compile(r"[a-z_][a-z0-9_]*[a-z0-9]|[a-z]{2,}")
_CAMEL = re.compile(r"[a-z]+|[A-Z][a-z]+|[A-Z]+(?![a-z])")
STOP = frozenset("""a an the is are was were be been of to in on at by for from with as or and if it its this that these those
then than but not no into via per you your we our can could would should will may might has have had do does did so such
which what when where who how all any some there here also only use used using please see""".split()) - {"not", "no"}


def normalise(text: str) -> str:
    """One line with numbers, hex, paths (down to the file name), IPs/ports, PIDs, timestamps and ranks masked."""
    s = text
    s = _CODE_NUM.sub(" ", s)
    for rx, rep in _MASKS:
        s = rx.sub(rep, s)
    s = _PATH.sub(_path_words, s)
    s = re.sub(r"\d+", " ", s) if not _KEEP.search(s) else _mask_digits_keep_codes(s)
    return " ".join(s.split())


_PATH_SKIP = re.compile(r"^(?:site-packages|dist-packages|python\d[\d.]*|lib|lib64|usr|local|opt|home|root|src|bin|\.?venv)$")


def _path_words(m) -> str:
    parts = [p for p in m.group(0).split("/") if p and not _PATH_SKIP.match(p)]
    return " " + " ".join(p.rsplit(".", 1)[0] if i == len(parts[-2:]) - 1 else p for i, p in enumerate(parts[-2:])) + " "


def _mask_digits_keep_codes(s: str) -> str:
    parts = []
    last = 0
    for m in _KEEP.finditer(s):
        parts.append(re.sub(r"\d+", " ", s[last:m.start()]))
        parts.append(" " + m.group(1) + " ")
        last = m.end()
    parts.append(re.sub(r"\d+", " ", s[last:]))
    return "".join(parts)


def tokens(text: str) -> list:
    """Tokens of ``text`` after :func:`normalise`: lower-case words, identifiers, and their
    camelCase / snake_case parts (``aclnnFlashAttentionScore`` → also ``flash``, ``attention``, ``score``);
    runs of Chinese characters as character bigrams."""
    out = []
    for code in _KEEP.findall(text):
        out.append(code.lower())
    for m in _CODE_NUM.finditer(text):
        out.append("code" + m.group(1).lstrip("-"))
    norm = normalise(text)
    for run in _CJK.findall(norm):  # Chinese messages (CANN / MindIE FAQs): character bigrams
        out += [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]
    for raw in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", norm):
        low = raw.lower()
        if len(low) < 2 or low in STOP:
            continue
        out.append(low)
        if "_" in raw or (any(c.isupper() for c in raw[1:]) and any(c.islower() for c in raw)):
            for p in (x for chunk in raw.split("_") for x in _CAMEL.findall(chunk)):
                pl = p.lower()
                if len(pl) >= 3 and pl != low and pl not in STOP:
                    out.append(pl)
    return out


# ---------------------------------------------------------------- error codes

_CODE_WORD_NUM = re.compile(r"(?i)\b(?:error|code|ret|retcode|errno|failed|status)\b[^0-9\n]{0,20}?(?<![\d.])(-?[1-5]\d{5})\b")
"""A six-digit ACL / runtime code after an error word, also without ``is``/``=`` (``failed 507035``)."""
_NUM_ERROR = re.compile(r"(?<![\d.])\b([1-5]\d{5}) error\b")
"""A six-digit code named before the word: ``rtMemcpy 107030 error``."""
_GENERIC_SHAPE = re.compile(r"^(?:E[0-9A-Z]9999|ERR\d{5})$")
"""Codes that only say an error happened: the CANN inner-error wrappers (``EZ9999``, ``EE9999``, ``E89999``) and the
torch_npu layer suffixes (``ERR00100``, ``ERR01100``)."""


def codes_of(text: str) -> set:
    """The error codes ``text`` names: CANN codes (``EZ1001``), torch_npu suffixes (``ERR01100``) and numeric codes
    after an error word (``error code is 507015``, ``ret=507015``, ``failed 507035``; as the number's string)."""
    out = set(_KEEP.findall(text))
    for m in _CODE_NUM.finditer(text):
        out.add(m.group(1).lstrip("-"))
    for m in _CODE_WORD_NUM.finditer(text):
        out.add(m.group(1).lstrip("-"))
    out.update(_NUM_ERROR.findall(text))
    return out


@lru_cache(maxsize=512)
def generic_code(code: str) -> bool:
    """``code`` (as :func:`codes_of` gives it) names no specific cause: a wrapper shape (``*9999``, ``ERR*``), or a
    code the catalogue reads as a wrapper or a generic reading (role ``wrapper``, priority < 0: EE1001, EZ1001,
    561002, 507033 ...)."""
    if _GENERIC_SHAPE.match(code):
        return True
    try:
        from ascendify.diagnose.signatures import load as load_catalogue
        kb = load_catalogue()
    except (ImportError, OSError, ValueError):  # pragma: no cover - the catalogue always loads in the package
        return False
    if code.isdigit():
        known = kb.acl_code(int(code))
        if known is not None and known[1] == "wrapper":
            return True
        sid = f"acl-{code}"
    elif code[:1] == "E":
        if kb.cann_code(code)[1] == "wrapper":
            return True
        sid = f"cann-{code}"
    else:
        return False
    return any(s.id == sid and (s.role == "wrapper" or s.priority < 0) for s in kb.signatures)


def specific_codes(codes: Iterable[str]) -> set:
    """The codes of ``codes`` that name a cause (:func:`generic_code` is false)."""
    return {c for c in codes if not generic_code(c)}


# ---------------------------------------------------------------- subjects

_SUBJECTS = (
    ("module", re.compile(r"No module named ['\"]?([A-Za-z_][\w.]*)")),
    ("attribute", re.compile(r"has no attribute ['\"]([A-Za-z_]\w*)['\"]")),
    ("name", re.compile(r"cannot import name ['\"]([A-Za-z_]\w*)['\"]")),
    ("symbol", re.compile(r"undefined symbol:? ?([A-Za-z_]\w+)")),
    ("library", re.compile(r"\b(lib[\w+-]+?)\.so[\w.]*: cannot open shared object file")),
)
"""What a message is about, by its template: the module of ``No module named 'X'``, the attribute of ``has no
attribute 'X'``, the name of ``cannot import name 'X'``, the symbol of ``undefined symbol: X``, the library of
``libX.so: cannot open shared object file``.  The words around them are the same for every such message; the subject
is what tells one issue from another."""


def subjects_of(text: str) -> dict:
    """``{template: {subject, ...}}`` of :data:`_SUBJECTS` in ``text`` (subjects lower-cased)."""
    out: dict = {}
    for kind, rx in _SUBJECTS:
        for m in rx.finditer(text):
            out.setdefault(kind, set()).add(m.group(1).lower())
    return out


def subjects_disagree(own: dict, log: dict) -> bool:
    """A record's quote is about other subjects than the log: for a template both show, no subject in common
    (a thread about ``No module named 'vllm_ascend.lora'`` is not the answer for ``No module named
    'vllm_ascend.vllm_ascend_C'``, nor one about ``libhccl.so`` for a log missing ``libascend_hal.so``)."""
    return any(kind in log and not (subj & log[kind]) for kind, subj in own.items())


# ---------------------------------------------------------------- data

def validate(rec: dict, where: str = "") -> list:
    """Problems of one record (empty list: fine)."""
    p = []
    w = f"{where}: " if where else ""
    if not isinstance(rec, dict):
        return [f"{w}not a JSON object"]
    for k in REQUIRED:
        v = rec.get(k)
        if v is None or (isinstance(v, (str, list)) and not v):
            p.append(f"{w}{rec.get('id', '?')}: missing {k}")
    unknown = set(rec) - set(FIELDS)
    if unknown:
        p.append(f"{w}{rec.get('id', '?')}: unknown field(s) {', '.join(sorted(unknown))}")
    url = rec.get("url")
    if isinstance(url, str) and url and not _URL_SHAPE.match(url):
        p.append(f"{w}{rec.get('id', '?')}: url {url!r} is not an http(s) URL")
    q = rec.get("quote")
    if q is not None and (not isinstance(q, list) or not all(isinstance(x, str) and x.strip() for x in q)):
        p.append(f"{w}{rec.get('id', '?')}: quote must be a non-empty list of non-empty strings")
    d = rec.get("date")
    if isinstance(d, str) and d and not _DATE.match(d):
        p.append(f"{w}{rec.get('id', '?')}: date {d!r} is not YYYY-MM-DD")
    fw = rec.get("framework")
    if fw is not None and fw not in FRAMEWORKS:
        p.append(f"{w}{rec.get('id', '?')}: framework {fw!r} not one of {', '.join(FRAMEWORKS)} or null")
    r = rec.get("resolution")
    if r is not None and r not in RESOLUTIONS:
        p.append(f"{w}{rec.get('id', '?')}: resolution {r!r} not one of {', '.join(RESOLUTIONS)}")
    for k in ("title", "cause", "fix", "affected", "fixed_in", "project", "id"):
        v = rec.get(k)
        if v is not None and not isinstance(v, str):
            p.append(f"{w}{rec.get('id', '?')}: {k} must be a string or null")
    if isinstance(q, list) and not tokens(" ".join(x for x in q if isinstance(x, str))):
        p.append(f"{w}{rec.get('id', '?')}: quote has no words left after normalising")
    return p


def _data_dir():
    return resources.files("ascendify.diagnose").joinpath("data").joinpath(DATA_DIR)


def data_files(root=None) -> list:
    """``[(name, bytes)]`` of the ``.jsonl`` files, in name order."""
    root = root if root is not None else _data_dir()
    if not root.is_dir():
        return []
    return [(f.name, f.read_bytes()) for f in sorted(root.iterdir(), key=lambda p: p.name) if f.name.endswith(".jsonl")]


def read_records(files: list, strict: bool = True) -> tuple:
    """``(records, problems)`` of ``[(name, bytes)]``; duplicate ids / URLs are problems too."""
    recs, problems = [], []
    ids, urls = {}, {}
    for name, data in files:
        for n, line in enumerate(data.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{name}:{n}"
            try:
                rec = json.loads(line)
            except ValueError as exc:
                problems.append(f"{where}: not JSON ({exc})")
                continue
            bad = validate(rec, where)
            if bad:
                problems += bad
                if strict:
                    continue
            rid, url = rec.get("id"), rec.get("url")
            if rid in ids:
                problems.append(f"{where}: duplicate id {rid} (also {ids[rid]})")
                continue
            if url in urls:  # a problem for the data test; the record is kept (one FAQ page, several answers)
                problems.append(f"{where}: duplicate url {url} (also {urls[url]}); give each answer its own #anchor")
            ids[rid] = where
            urls.setdefault(url, where)
            recs.append({k: rec.get(k) for k in FIELDS})
    return recs, problems


def sources_hash(files: list) -> dict:
    """SHA-256 of each data file, and of the catalogue (``catalogue``: the generic-line marks read its messages)."""
    out = {name: hashlib.sha256(data).hexdigest() for name, data in files}
    try:
        h = hashlib.sha256()
        for name, text in _catalogue_texts():
            h.update(name.encode() + b"\0" + text.encode("utf-8"))
        out["catalogue"] = h.hexdigest()
    except OSError:  # pragma: no cover
        pass
    return out


def _catalogue_texts() -> list:
    """``[(name, text)]`` of the catalogue's data files, as ``signatures.data_files`` reads them (read here so that
    checking the index is current does not import and compile the catalogue module: a fresh process loads the
    index in well under 100 ms)."""
    root = resources.files("ascendify.diagnose").joinpath("data")
    files = [("signatures.toml", root.joinpath("signatures.toml").read_text(encoding="utf-8"))]
    cat = root.joinpath("catalogue")
    if cat.is_dir():
        for f in sorted(cat.iterdir(), key=lambda p: p.name):
            if f.name.endswith(".toml"):
                files.append((f"catalogue/{f.name}", f.read_text(encoding="utf-8")))
    return files


# ---------------------------------------------------------------- index

def record_codes(rec: dict) -> list:
    """The error codes a record's title and quoted lines name (sorted; :func:`codes_of`)."""
    text = "\n".join([rec.get("title") or ""] + [q for q in (rec.get("quote") or []) if isinstance(q, str)])
    return sorted(codes_of(text))


def record_subjects(rec: dict) -> dict:
    """``{template: [subject, ...]}`` of a record's quoted lines (:func:`subjects_of`)."""
    out: dict = {}
    for q in rec.get("quote") or []:
        if isinstance(q, str):
            for k, v in subjects_of(q).items():
                out.setdefault(k, set()).update(v)
    return {k: sorted(v) for k, v in sorted(out.items())}


def doc_texts(rec: dict) -> list:
    """``[(kind, text)]`` a record is matched by: each quoted line, all quoted lines together
    (a traceback quoted in pieces), and the title (weighed down by :data:`TITLE_WEIGHT`)."""
    quote = [q for q in (rec.get("quote") or []) if q.strip()]
    out = [("quote", q) for q in quote[:12]]
    if 1 < len(quote) <= 6:
        out.append(("all", "\n".join(quote)))
    if rec.get("title"):
        out.append(("title", rec["title"]))
    return out


TITLE_WEIGHT = 0.85


def build(records: list, sources: Optional[dict] = None) -> dict:
    """The index (a JSON-able dict) of ``records``: one document per quoted line, per quote and per title."""
    docs = []
    df: dict = {}
    for ri, rec in enumerate(records):
        for kind, text in doc_texts(rec):
            tf: dict = {}
            for t in tokens(text):
                tf[t] = tf.get(t, 0) + 1
            if not tf:
                continue
            docs.append({"rec": ri, "kind": kind, "tf": tf, "len": sum(tf.values()), "text": text if kind == "quote" else None})
            for t in tf:
                df[t] = df.get(t, 0) + 1
    n = len(docs)
    idf = {t: round(math.log(1 + (n - d + 0.5) / (d + 0.5)), 5) for t, d in sorted(df.items())}
    avgdl = (sum(d["len"] for d in docs) / n) if n else 1.0
    idx = {"version": INDEX_VERSION, "sources": sources or {}, "n": n, "avgdl": round(avgdl, 4), "idf": idf,
           "docs": docs, "records": records, "codes": [sorted(specific_codes(record_codes(r))) for r in records],
           "subjects": [record_subjects(r) for r in records]}
    for d in docs:
        d["self"] = round(_score(idx, d, set(d["tf"]))[0], 5)
        d["top"] = round(_self_score(idx, d), 5)
        d["distinct"] = sum(1 for t in d["tf"] if idf.get(t, 0) > COMMON_IDF)
    _mark_generic(docs, records, idf)
    _mark_catalogued_wrappers(docs, records)
    _mark_all_specific(docs)
    for d in docs:
        d.pop("text", None)
    return idx


SHORT_QUOTE = 8
"""A quoted line of at most this many distinct words, nearly all of them words of the catalogue's own messages,
is generic: it says which kind of error happened (a stream sync failed), not which issue."""


def _mark_catalogued_wrappers(docs: list, records: list) -> None:
    """Quoted lines the catalogue reads as a wrapper, a generic code or a consequence (``ERR01100 OPS call acl api
    failed``, ``EZ9999: Inner Error!``, ``error code is 507015``, ``TBE Subprocess ... main process disappeared``) are
    generic too: they say an error happened, not which."""
    try:
        from ascendify.diagnose.signatures import Matcher
        matcher = Matcher()
    except (ImportError, ValueError, OSError):  # pragma: no cover - the catalogue always loads in the package
        return
    vocab = set()
    for sg in matcher.kb.signatures:
        vocab.update(tokens(" ".join(sg.any + sg.also_any + sg.examples[:2] + (sg.title,))))
    for d in docs:
        if d.get("generic") or d["kind"] == "all":
            continue
        words = set(d["tf"])
        if len(words) <= SHORT_QUOTE and len(words & vocab) >= 0.8 * len(words):
            d["generic"] = 1  # a short line of the catalogue's own error words ("ACL stream synchronize failed")
            continue
        text = d.get("text")
        if text is None:
            continue
        lm = matcher.match_line(text)
        if lm is None:
            continue
        # a line the catalogue reads as a wrapper, a generic code or a consequence (TBE helpers outliving their main
        # process, a watchdog firing after a peer died) says that something failed elsewhere, not which issue
        consequence = lm.signatures and all(s.role == "consequence" for s, _g in lm.signatures)
        sig_generic = lm.signatures and all(s.role in ("wrapper", "consequence") or s.priority < 0 for s, _g in lm.signatures)
        codes_only = not lm.signatures and (lm.cann_codes or lm.acl_codes or lm.err_codes)
        if consequence or ((sig_generic or codes_only) and not reason_mod.extract(text)):
            d["generic"] = 1  # a wrapper line with a reason of its own is specific; a consequence line's text is no reason


def _mark_all_specific(docs: list) -> None:
    """An "all quoted lines" document whose record has generic and specific quotes gets ``spec``: the terms of its
    specific quotes.  Matched by none of them (only by the generic lines, a TBE helper's "main process disappeared" that many
    failures print), it counts :data:`GENERIC_WEIGHT` like the generic line alone."""
    by_rec: dict = {}
    for d in docs:
        by_rec.setdefault(d["rec"], []).append(d)
    for group in by_rec.values():
        quotes = [d for d in group if d["kind"] == "quote"]
        if not any(d.get("generic") for d in quotes) or all(d.get("generic") for d in quotes):
            continue  # every quote specific, or every one generic (then their combination is what identifies it)
        spec = sorted({t for d in quotes if not d.get("generic") for t in d["tf"]})
        for d in group:
            if d["kind"] == "all":
                d["spec"] = spec


SHARED_JACCARD = 0.7
GENERIC_WEIGHT = 0.45
"""A quoted line that records with other fixes quote too (token-set Jaccard >= SHARED_JACCARD: the generic OOM
line, 'ERR01100 OPS call acl api failed', 'Tensor self not implemented for DT_…') identifies no issue on its own:
matched alone it counts GENERIC_WEIGHT of its score; the record's other quoted lines must carry the match."""


def _mark_generic(docs: list, records: list, idf: dict) -> None:
    post: dict = {}
    for i, d in enumerate(docs):
        if d["kind"] == "quote":
            for t in d["tf"]:
                post.setdefault(t, []).append(i)
    for i, d in enumerate(docs):
        if d["kind"] != "quote":
            continue
        mine = set(d["tf"])
        rare = sorted(mine, key=lambda t: (-idf.get(t, 0), t))[:2]  # ties by name: the same index under every hash seed
        seen = set()
        for t in rare:
            for j in post.get(t, ()):
                if j == i or j in seen:
                    continue
                seen.add(j)
                o = docs[j]
                if o["rec"] == d["rec"] or records[o["rec"]].get("fix") == records[d["rec"]].get("fix"):
                    continue
                other = set(o["tf"])
                if len(mine & other) >= SHARED_JACCARD * len(mine | other):
                    d["generic"] = 1
                    break
            if d.get("generic"):
                break


SELF_TERMS = 6
"""Half of a match's confidence is the share of the quote's this many weightiest terms the log holds: a long quote
(a traceback line with a model name, a path and a sentence around the error) is found by a log that shows its
distinctive words, without having to repeat every one of them."""


def _self_score(idx: dict, d: dict) -> float:
    _s, common = _score(idx, d, set(d["tf"]))
    return sum(sorted((w for w, _t in common), reverse=True)[:SELF_TERMS])


def _score(idx: dict, d: dict, q) -> tuple:
    """BM25 of document ``d`` for the query terms ``q`` (a set, or a dict term -> weight 0-1)."""
    idf = idx["idf"]
    norm = K1 * (1 - B + B * d["len"] / idx["avgdl"])
    s = 0.0
    common = []
    weighted = isinstance(q, dict)
    for t, f in d["tf"].items():
        if t in q:
            w = idf.get(t, 0.0) * f * (K1 + 1) / (f + norm) * (q[t] if weighted else 1.0)
            s += w
            common.append((w, t))
    return s, common


CLOSE_CONFIDENCE = 0.7
"""A match at or above this confidence is stated as the issue; between :data:`MIN_CONFIDENCE` and it, as the
closest known issue (the fix is offered, not asserted)."""
NOISE_WEIGHT = 0.6
"""Weight of the words of a query line that does not look like an error (a frame, an INFO line, a progress row):
they may confirm a match but not carry it."""
_ERRORISH = re.compile(r"(?i)error|fail|exception|invalid|not (?:support|implemented|found|exist)|cannot|can't|unable|"
                       r"timed? ?out|refused|denied|abort|illegal|overflow|mismatch|incompatible|no module|"
                       r"undefined|\bnan\b|\binf\b|out of memory|\b(?:E[0-9A-Z]\d{4}|ERR\d{5})\b|must be|should be|"
                       r"unsupported|conflict|killed|assert|错误|失败|不支持")


def query_weights(query: Iterable[str]) -> dict:
    """``{term: weight}`` of the query lines: 1 for a term of a line that reads as an error (a code, "failed",
    "not supported", "must be" ...), :data:`NOISE_WEIGHT` for a term only noise lines hold."""
    out: dict = {}
    for text in query:
        if not text:
            continue
        w = 1.0 if _ERRORISH.search(text) else NOISE_WEIGHT
        for t in tokens(text):
            if out.get(t, 0.0) < w:
                out[t] = w
    return out


@dataclass
class Match:
    record: dict
    score: float
    confidence: float
    terms: list  # the distinctive terms log and record share, most weighty first
    enough: bool = True  # shares enough distinctive terms (:data:`MIN_TERMS`, fewer for a short quote)
    coverage: float = 0.0  # share of the record's quoted lines the log matches closely (ties go to the higher)
    same_framework: bool = False  # the record's framework is the one the log shows (ties go to it)

    @property
    def close(self) -> bool:
        """Close enough to assert that this is the issue (:data:`CLOSE_CONFIDENCE`); below it the answer says
        "closest known issue"."""
        return self.confidence >= CLOSE_CONFIDENCE

    def to_dict(self) -> dict:
        r = self.record
        return {"id": r["id"], "url": r["url"], "score": round(self.score, 3), "confidence": round(self.confidence, 2),
                "fixed_in": r.get("fixed_in"), "affected": r.get("affected"), "title": r.get("title"),
                "project": r.get("project"), "framework": r.get("framework"), "terms": self.terms[:8]}


class Index:
    def __init__(self, data: dict):
        self.data = data
        self.records = data["records"]
        self.docs = data["docs"]
        self.post: Optional[dict] = None
        self.codes = data.get("codes")  # per record: the specific codes it is about (classified when it was built)
        if self.codes is None or len(self.codes) != len(self.records):
            self.codes = [sorted(specific_codes(record_codes(r))) for r in self.records]
        self._specific: dict = {}
        self.subj = data.get("subjects")  # per record: what its quotes are about (the module, attribute, symbol ...)
        if self.subj is not None and len(self.subj) != len(self.records):
            self.subj = None
        self._subjects: dict = {}

    def specific_codes_of(self, ri: int) -> set:
        """The codes record ``ri`` is about (its codes less the generic ones, :func:`generic_code`)."""
        got = self._specific.get(ri)
        if got is None:
            got = self._specific[ri] = set(self.codes[ri])
        return got

    def subjects_of(self, ri: int) -> dict:
        """What record ``ri``'s quoted lines are about (:func:`record_subjects`), as sets."""
        got = self._subjects.get(ri)
        if got is None:
            raw = self.subj[ri] if self.subj is not None else record_subjects(self.records[ri])
            got = self._subjects[ri] = {k: set(v) for k, v in raw.items()}
        return got

    def _postings(self) -> dict:
        if self.post is None:
            post: dict = {}
            for i, d in enumerate(self.docs):
                for t in d["tf"]:
                    post.setdefault(t, []).append(i)
            self.post = post
        return self.post

    def search(self, query: Iterable[str], framework: Optional[str] = None, top: int = 5,
               exclude: Optional[set] = None, codes: Iterable[str] = ()) -> list:
        """Records ranked for the query text(s); ``confidence`` = score / the record's own best score.

        Codes must agree: when the query lines (plus ``codes``, the codes seen elsewhere in the log) name error
        codes and a record is about specific codes (not only wrappers such as EZ9999), the record is a candidate
        only when the log shows one of them (a thread about 507035 is not the answer for a log that shows 507015,
        nor for one whose only codes are EE1001 and ERR01100)."""
        query = [x for x in query if x]
        qw = query_weights(query)
        log_codes = set(codes)
        log_subj: dict = {}
        for text in query:
            log_codes |= codes_of(text)
            for k, v in subjects_of(text).items():
                log_subj.setdefault(k, set()).update(v)
        q = set(qw)
        if not q or not self.docs:
            return []
        post = self._postings()
        cand = set()
        for t in q:
            cand.update(post.get(t, ()))
        exclude = exclude if exclude is not None else excluded_urls()
        best: dict = {}
        covered: dict = {}  # record -> quote lines matched closely (a record whose every quoted line is in the log wins a tie)
        for i in cand:
            d = self.docs[i]
            rec = self.records[d["rec"]]
            if (exclude and rec["url"].rstrip("/") in exclude) or d["self"] <= 0:
                continue
            if log_codes:
                own = self.specific_codes_of(d["rec"])
                if own and not own & log_codes:
                    continue  # the record is about other codes than the log's
            if log_subj and self.subjects_of(d["rec"]) and subjects_disagree(self.subjects_of(d["rec"]), log_subj):
                continue  # the record is about another module / attribute / symbol / library than the log's
            s, common = _score(self.data, d, qw)
            # how much of the quote the log holds: the mean of the share of all its words' weight and of its
            # SELF_TERMS weightiest words' weight (a long quote is found by its distinctive words, and 1.0 still
            # means the whole quote)
            generic = d.get("generic") or ("spec" in d and not any(t in d["spec"] for _w, t in common))
            conf = 0.5 * (s / d["self"] + min(1.0, s / (d.get("top") or d["self"]))) * (TITLE_WEIGHT if d["kind"] == "title" else 1.0) * (GENERIC_WEIGHT if generic else 1.0)
            fw = rec.get("framework")
            if framework and fw and fw not in (framework, "torch_npu", "cann", "hccl", "container"):
                conf *= 0.8  # an issue of another framework than the one the log shows
            same_fw = bool(framework) and fw == framework
            terms = [t for w, t in sorted(common, reverse=True) if self.data["idf"].get(t, 0) > COMMON_IDF]
            need = min(MIN_TERMS, d.get("distinct", MIN_TERMS))
            m = Match(rec, s, min(conf, 1.0), terms, len(terms) >= max(1, need), same_framework=same_fw)
            if d["kind"] == "quote" and m.confidence >= MIN_CONFIDENCE:
                covered[d["rec"]] = covered.get(d["rec"], 0) + 1
            old = best.get(d["rec"])
            if old is None or (m.enough, m.confidence, m.score) > (old.enough, old.confidence, old.score):
                best[d["rec"]] = m
        nquotes: dict = {}
        for ri in best:
            nquotes[ri] = max(1, len([q for q in (self.records[ri].get("quote") or []) if q.strip()][:12]))
        for ri, m in best.items():
            m.coverage = round(covered.get(ri, 0) / nquotes[ri], 3)
        # ties: the issue of the framework the log shows, then the one whose quoted lines the log covers best
        out = sorted(best.values(), key=lambda m: (-m.enough, -round(m.confidence, 2), -m.same_framework, -m.coverage,
                                                   -m.score, m.record["id"]))
        return out[:top]

    def best(self, query: Iterable[str], framework: Optional[str] = None, codes: Iterable[str] = ()) -> Optional[Match]:
        """The record the log matches, or None (thresholds :data:`MIN_CONFIDENCE`, :data:`MIN_TERMS`, :data:`MARGIN`;
        ``codes``: error codes seen elsewhere in the log, see :meth:`search`)."""
        ranked = self.search(query, framework=framework, top=3, codes=codes)
        if not ranked:
            return None
        m = ranked[0]
        if m.confidence < MIN_CONFIDENCE or not m.enough:
            return None
        other = next((o for o in ranked[1:] if o.record.get("fix") != m.record.get("fix") and o.enough), None)
        if other is not None and m.confidence - other.confidence < MARGIN:
            return None
        return m


def excluded_urls() -> set:
    raw = os.environ.get(EXCLUDE_ENV, "")
    return {u.strip().rstrip("/") for u in raw.split(",") if u.strip()}


def index_path():
    return _data_dir().joinpath(INDEX_NAME)


@lru_cache(maxsize=1)
def load() -> Index:
    """The packaged index: ``_index.json`` when it is current, else built from the ``.jsonl`` files."""
    files = data_files()
    want = sources_hash(files)
    p = index_path()
    if p.is_file():
        try:
            data = json.loads(p.read_bytes())
        except ValueError:
            data = None
        if data and data.get("version") == INDEX_VERSION and data.get("sources") == want:
            return Index(data)
    recs, _problems = read_records(files)
    return Index(build(recs, want))


def from_records(records: list) -> Index:
    """An index of the given records (tests, tools)."""
    recs, problems = read_records([("<records>", "\n".join(json.dumps(r) for r in records).encode())])
    if problems:
        raise ValueError("; ".join(problems))
    return Index(build(recs))


# ---------------------------------------------------------------- versions

_VPART = re.compile(r"\d+|rc|post|alpha|beta|dev|[a-z]")


def vkey(v: str) -> tuple:
    """A sortable key of a loose version (``8.0.RC1`` < ``8.0.0`` < ``8.1.RC1``; ``0.9.1rc1`` < ``0.9.1``;
    ``2.1.0.post10`` > ``2.1.0``)."""
    out = []
    for p in _VPART.findall(v.lower()):
        if p.isdigit():
            out.append((2, int(p)))
        elif p in ("rc", "alpha", "beta", "dev", "a", "b", "t"):
            out.append((0, {"dev": 0, "alpha": 1, "a": 1, "beta": 2, "b": 2, "t": 2, "rc": 3}[p]))
        elif p == "post":
            out.append((3, 0))
    out.append((1, 0))  # a plain release sorts after its rc / before its post
    return tuple(out)


_FIXED_VER = re.compile(r"v?(\d+\.\d+(?:\.\d+)?(?:\.?(?:rc|RC|post|alpha|beta|T)\d+)*)")


def fixed_version(fixed_in: Optional[str]) -> Optional[str]:
    if not fixed_in:
        return None
    m = _FIXED_VER.search(fixed_in)
    return m.group(1) if m else None


def compare_fixed(rec: dict, versions: dict) -> str:
    """A sentence on the release that fixed ``rec`` against the versions the log shows
    (``versions``: ``{"torch_npu": "2.1.0", "cann": "8.0.RC1", "vllm-ascend": "0.7.3", ...}``)."""
    fixed = rec.get("fixed_in")
    if not fixed:
        return ""
    fv = fixed_version(fixed)
    proj = _project_key(rec.get("project") or "", fixed)
    have = versions.get(proj) if proj else None
    if fv is None or have is None:
        return f"Fixed in {fixed}" + (f"; the log shows no {proj} version — check yours." if proj else ".")
    if vkey(have) < vkey(fv):
        return f"Fixed in {fixed}; the log shows {proj} {have}, older: upgrade."
    return (f"Fixed in {fixed}; the log shows {proj} {have}, which should already have that fix — "
            "if it still fails, this is probably a different issue with the same message.")


_PROJECT_KEYS = (("vllm-ascend", "vllm-ascend"), ("vllm_ascend", "vllm-ascend"), ("torch_npu", "torch_npu"),
                 ("torch-npu", "torch_npu"), ("pytorch", "torch_npu"), ("cann", "cann"), ("mindspeed", "mindspeed"),
                 ("mindie", "mindie"), ("llama", "llamafactory"), ("swift", "ms-swift"), ("lmdeploy", "lmdeploy"),
                 ("sglang", "sglang"), ("deepspeed", "deepspeed"), ("triton", "triton-ascend"), ("vllm", "vllm"))


def _project_key(project: str, fixed_in: str) -> Optional[str]:
    for text in (fixed_in.lower(), project.lower()):
        for word, key in _PROJECT_KEYS:
            if word in text:
                return key
    return None
