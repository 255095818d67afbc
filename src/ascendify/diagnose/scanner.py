"""Streaming reader for ``ascendify diagnose``: files, folders, ``-`` (stdin), ``.gz``.

A log is read in 1 MiB blocks of bytes; one trigger pattern (the knowledge
base's anchors and code shapes, the traceback markers, and — in the first MiB
or near an anomaly — the metric and chip / version words) is searched over each
block and only the lines it hits are decoded; while a Python traceback is open
every line is read (:class:`~ascendify.diagnose.structure.TracebackReader`).
Metric lines are sampled after the first MiB (see :data:`FULL_HEAD`).  Memory is
bounded by the block size plus ``MAX_CARRY`` (the longest line kept whole);
time is linear in the input size.  Each hit carries its file, 1-based line
number, rank (launcher prefix, the text, or the path), timestamp (from the line
or the nearest earlier one in the block), the Python frame that raised, the
traceback's exception (``exc``) and the metric symptoms decided on it (``events``).
"""

from __future__ import annotations

import codecs
import gzip
import os
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime
from typing import BinaryIO, Iterator, Optional

from ascendify.diagnose import context as context_mod
from ascendify.diagnose import metrics as metrics_mod
from ascendify.diagnose import reason as reason_mod
from ascendify.diagnose.signatures import MAX_LINE, LineMatch, Matcher, _trie
from ascendify.diagnose.structure import (LAUNCHER_ROOT, ExcInfo, TracebackReader, bare_exception, launcher_rank, parse_time,
                                          prefix_rank, rank_in_text, split_rank, strip_log_prefix)
from ascendify.errors import AscendifyError

BLOCK = 1 << 20
PASTE_MAX = 16 << 10
"""Inputs of at most this many bytes in all are a paste: every line of it is kept (:attr:`Scanner.paste`) for
known-issue retrieval, not only the lines a trigger finds (a pasted message fragment carries no error word)."""
PASTE_LINES = 200
MAX_CARRY = 4 << 20
"""A "line" longer than this is cut into pieces (binary junk without newlines)."""
LOOKBACK = 4096
"""Bytes searched above a hit for its timestamp and Python frame."""

SKIP_EXT = {".pt", ".pth", ".bin", ".om", ".onnx", ".npy", ".npz", ".so", ".pyc", ".png", ".jpg", ".zip", ".tar", ".db",
            ".safetensors", ".ckpt", ".h5", ".pkl", ".whl"}
DOC_EXT = {".md", ".rst", ".html", ".htm", ".css", ".js", ".py", ".ipynb", ".toml", ".cfg", ".ini", ".sh", ".svg", ".gif",
           ".jpeg", ".pdf", ".yaml", ".yml"}
"""Documentation, code and config in a folder of logs (a README beside the rank logs): skipped when a
folder is walked, read when named on the command line."""
DOC_NAMES = ("readme", "license", "changelog", "notice")

_RANK_PATH = re.compile(r"(?:^|[^a-z])(?:rank|worker|proc)[_-]?(\d{1,5})(?![0-9])", re.IGNORECASE)
_TS = re.compile(rb"(\d{4})-(\d\d)-(\d\d)[- T](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,6}))?(?:\.(\d{1,3}))?")
_TS_SHORT = re.compile(rb"(?<![\d-])(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\b")
_FRAME = re.compile(rb'File "([^"\n]{1,500})", line (\d{1,7}), in ([^\n]{1,200})')


@dataclass
class Frame:
    path: str
    line: int
    function: str


@dataclass
class Hit:
    """One matched line."""

    file: str
    line: int
    text: str
    match: LineMatch
    rank: Optional[int]
    time: Optional[float]  # seconds (naive local time of the log), or None
    frame: Optional[Frame]
    seq: int  # global order of discovery
    exc: Optional[ExcInfo] = None  # the line is the exception line of a Python traceback
    events: list = field(default_factory=list)  # metric symptoms decided on this line (metrics.Event)
    reason: str = ""  # the reason text the line gives for a CANN / ACL / HCCL message (reason.extract)
    salient: bool = False  # an error-looking line nothing else matched (known-issue retrieval, the last-resort finding)
    bench: bool = False  # a serving-benchmark result line (request concurrency, mean time per output token)


@dataclass
class FileStats:
    path: str
    lines: int = 0
    bytes: int = 0
    hits: int = 0
    skipped: str = ""


def decode(b: bytes) -> str:
    """Decode one log line: UTF-8, else GB18030 (Chinese consoles), else Latin-1; never raises."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return b.decode("gb18030")
    except UnicodeDecodeError:
        return b.decode("latin-1")


def rank_from_path(path: str) -> Optional[int]:
    """Rank named in a path (``rank_3.log``, ``worker-1/``, ``node0_rank7.txt``), else None."""
    last = None
    for m in _RANK_PATH.finditer(path.replace("\\", "/")):
        last = int(m.group(1))
    return last


def rank_from_line(line: str) -> Optional[int]:
    """The rank a line names (launcher prefix first, then ``RankID:N`` / ``rank N``), else None."""
    return split_rank(line)[0]


def _ts(buf: bytes, start: int, end: int, year: int = 2000) -> Optional[float]:
    last = None
    for m in _TS.finditer(buf, start, end):
        last = m
    if last is not None:
        g = last.groups()
        try:
            dt = datetime(int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), int(g[5]))
        except ValueError:
            return None
        frac = 0.0
        if g[6]:
            frac = int(g[6]) / 10 ** len(g[6])
            if g[7]:  # plog: .mmm.uuu
                frac += int(g[7]) / 10 ** (len(g[6]) + len(g[7]))
        return dt.timestamp() + frac
    for m in _TS_SHORT.finditer(buf, start, end):
        last = m
    if last is not None:
        g = last.groups()
        try:
            return datetime(year, int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4])).timestamp()
        except ValueError:
            return None
    return None


def _frame(buf: bytes, start: int, end: int) -> Optional[Frame]:
    """The last user frame (not site-packages / stdlib) in ``buf[start:end]``, else the last frame."""
    frames = [m for m in _FRAME.finditer(buf, start, end)]
    if not frames:
        return None
    chosen = frames[-1]
    for m in reversed(frames):
        p = m.group(1)
        if b"site-packages" not in p and b"dist-packages" not in p and b"/lib/python" not in p and not p.startswith(b"<"):
            chosen = m
            break
    return Frame(decode(chosen.group(1)), int(chosen.group(2)), decode(chosen.group(3)).strip())


def _utf16(head: bytes) -> Optional[str]:
    """``"utf-16-le"``/``"utf-16-be"`` when ``head`` looks like UTF-16 text (BOM, or
    NUL bytes at every other position, as Windows PowerShell redirection writes)."""
    if head.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le"
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be"
    sample = head[:4096]
    if len(sample) >= 64:
        odd = sample[1::2].count(0)
        even = sample[0::2].count(0)
        if odd > 0.4 * len(sample) / 2 and even < 0.05 * len(sample) / 2:
            return "utf-16-le"
        if even > 0.4 * len(sample) / 2 and odd < 0.05 * len(sample) / 2:
            return "utf-16-be"
    return None


class _Transcode:
    """Read a UTF-16 byte stream as UTF-8 bytes, block by block (bounded memory)."""

    def __init__(self, raw: BinaryIO, first: bytes, encoding: str):
        self.raw = raw
        self.pending = first
        self.dec = codecs.getincrementaldecoder(encoding)("replace")
        self.done = False

    def read(self, n: int) -> bytes:
        while not self.done:
            data = self.pending or self.raw.read(n)
            self.pending = b""
            if not data:
                self.done = True
                return self.dec.decode(b"", final=True).lstrip("\ufeff").encode("utf-8")
            text = self.dec.decode(data).lstrip("\ufeff")
            if text:
                return text.encode("utf-8")
        return b""


_CODE_SHAPES = rb"|E[0-9A-Z][0-9]{4}|ERR[0-9]{5}"
_TB_TRIGGER = re.compile(rb"Traceback \(most recent call last\)")
_TB_WORDS = (b"Traceback (most recent call last)", b"During handling of the above", b"The above exception was",
             b"Error: ", b"Exception: ", b"Root Cause (first observed failure)", b'File "')
_FRAME_TRIGGER = re.compile(rb'^\s*File "[^"\n]{1,500}", line \d{1,7}, in ')
"""A traceback frame line: with no traceback open it starts one (a paste cut above its ``Traceback`` header)."""
_METRIC_TRIGGER = re.compile(b"|".join(re.escape(t) for t in metrics_mod.TRIGGERS))
_CONTEXT_TRIGGER = re.compile(b"|".join(re.escape(t) for t in context_mod.TRIGGERS))
_FRAMEWORK_TRIGGER = re.compile(b"|".join(re.escape(t) for t in context_mod.FRAMEWORK_TRIGGERS))
FULL_HEAD = 1 << 20
"""Every metric line in the first MiB of a stream is parsed; after it, the
lines :data:`metrics.HOT` finds (NaN, zero loss, …), every metric line for
``FULL_AFTER_HOT`` bytes after one of them, and one metric line every
``SAMPLE`` bytes (for the grad-norm median and the loss-scale maximum)."""
FULL_AFTER_HOT = 64 << 10
SAMPLE = 16 << 10
FOLLOW_LINES = 8
"""Lines read after a line with a CANN / ACL / torch_npu code (or ``Inner Error`` / ``Reason:``), for the message's
own reason text (CANN prints it on continuation lines that carry no anchor of their own)."""
SALIENT_WORDS = (b"[ERROR]", b"ERROR", b"Error", b"error:", b"error,", b"failed", b"Failed", b"FAILED", b"disappeared",
                 b"not supported", b"not support", b"Aborted", b"core dumped", b"Segmentation fault", b"Killed",
                 b"Permission denied", b"permission denied", b"Operation not permitted", b"privileged", b"/dev/davinci",
                 b'{"error"')  # a server's JSON error reply
"""Words of an error-looking line: such lines that nothing else matches are kept (bounded) for known-issue
retrieval and, when a log has no other error, as its finding."""
_SALIENT = re.compile(b"|".join(re.escape(w) for w in SALIENT_WORDS))
BENCH_WORDS = (b"Mean TPOT", b"request concurrency")
"""Lines of a serving benchmark's result block (vLLM benchmark_serving / `vllm bench serve`): the concurrency of
each run and its mean time per output token (a step with concurrency is a symptom of its own)."""
_BENCH = re.compile(b"|".join(re.escape(w) for w in BENCH_WORDS))
_FOLLOW_WORDS = (b"Inner Error", b"Reason:", b"reason:", b"The reason is", b"[ERROR]", b"EE1001", b"EE9999")
_FOLLOW_RE = re.compile(b"|".join(re.escape(w) for w in _FOLLOW_WORDS))
CONTEXT_HEAD = 1 << 20
"""Chip / version lines are looked for in the first MiB of each stream (banners, `pip list`, `npu-smi` come first;
the context words, `torch` above all, slow the trigger search down about 2x)."""


class Scanner:
    """Scan byte streams with one :class:`Matcher`; collect hits in order.

    Besides the signature hits of the knowledge base, each stream is read for
    its structure (:mod:`.structure`): Python tracebacks (all lines are read
    while one is open), metric records (:mod:`.metrics`) and chip / version
    facts (:mod:`.context`, shared by all streams of one run).
    """

    def __init__(self, matcher: Optional[Matcher] = None, context: Optional[context_mod.Context] = None):
        self.matcher = matcher or Matcher()
        self.paste: list = []  # [(file, line, text)] of all inputs while they are a paste (PASTE_MAX bytes in all)
        self._paste_bytes = 0
        self.kb_trigger = self.matcher.kb.trigger
        self.context = context if context is not None else context_mod.Context()
        # one prefix trie over every trigger word (anchors, traceback words, error-looking words, and per variant
        # the metric / context words): at each position the engine tests one branch per distinct first byte
        self._base_words = ({a.encode() for a in self.matcher.kb.anchors} | set(_TB_WORDS) | set(SALIENT_WORDS)
                            | set(BENCH_WORDS))
        self._met_words = set(metrics_mod.TRIGGERS)
        self._ctx_missing = None
        self._ctx_trigger_update()
        self.full_until = FULL_HEAD
        self.seq = 0
        self.year = 2000
        self._tb = TracebackReader()
        self._trackers: dict = {}
        self._launcher_left = 0
        self._launcher_until = 0
        self._follow_left = 0
        self._follow_until = 0

    def _ctx_trigger_update(self) -> None:
        """(Re)build the triggers for [metrics on][context on]; the context words are
        only those of the facts still missing (no ``torch`` once both versions are known)."""
        missing = self.context.missing_triggers()
        if missing == self._ctx_missing:
            return
        self._ctx_missing = missing
        ctx_words = set(missing)

        def build(met: bool, ctx: bool) -> re.Pattern:
            words = self._base_words | (self._met_words if met else set()) | (ctx_words if ctx else set())
            return re.compile(_trie(sorted(words)) + _CODE_SHAPES)

        self.triggers = {(m, c): build(m, c) for m in (False, True) for c in (False, True)}
        self.trigger = self.triggers[(True, True)]
        self._context_trigger = (re.compile(b"|".join(re.escape(t) for t in missing)) if missing
                                 else re.compile(b"(?!x)x"))

    def _keep_paste(self, block: bytes, name: str) -> None:
        """The lines of a stream's first block while all inputs so far stay within :data:`PASTE_MAX` bytes."""
        self._paste_bytes += len(block)
        if self._paste_bytes > PASTE_MAX:
            self.paste = []
            return
        for n, raw in enumerate(block.split(b"\n"), 1):
            text = decode(raw).rstrip("\r").replace("\x00", "").strip()
            if text and len(self.paste) < PASTE_LINES:
                self.paste.append((name, n, text[:MAX_LINE]))

    def scan_stream(self, fh: BinaryIO, name: str, stats: FileStats, path_rank: Optional[int]) -> Iterator[Hit]:
        """Yield the hits of one stream, reading ``BLOCK`` bytes at a time."""
        self._tb = TracebackReader()
        self._trackers = {}
        self.full_until = FULL_HEAD
        self._launcher_left = 0
        self._follow_left = 0
        carry = b""
        lines_before = 0  # line number offset of the current region
        newlines, last = 0, b"\n"
        first = True
        while True:
            block = fh.read(BLOCK)
            if first:
                first = False
                enc = _utf16(block)
                if enc:
                    fh = _Transcode(fh, block, enc)  # type: ignore[assignment]
                    block = fh.read(BLOCK)
                elif block and block[:8192].count(b"\x00") > 64:
                    stats.skipped = "looks binary (NUL bytes), not a text log"
                    return
            if block and stats.bytes == 0:
                self._keep_paste(block, name)
            elif block:
                self._paste_bytes = PASTE_MAX + 1
                self.paste = []
            if block:
                stats.bytes += len(block)
                newlines += block.count(b"\n")
                last = block[-1:]
            buf = carry + block if carry else block
            self.base = stats.bytes - len(buf)
            if not block:
                if buf:
                    yield from self._region(buf, len(buf), name, stats, path_rank, lines_before)
                break
            cut = buf.rfind(b"\n")
            if cut < 0:
                if len(buf) < MAX_CARRY:
                    carry = buf
                    continue
                yield from self._region(buf, len(buf), name, stats, path_rank, lines_before)
                carry = b""
                continue
            yield from self._region(buf, cut, name, stats, path_rank, lines_before)
            lines_before += buf.count(b"\n", 0, cut) + 1
            carry = buf[cut + 1:]
        stats.lines = newlines + (1 if stats.bytes and last != b"\n" else 0)
        for rank, user, lastf, frames in self._tb.open_tracebacks()[:2]:
            # a traceback pasted without its exception line: its last frames are all the log says (it stands as the
            # finding only when nothing else explains the log: engine._last_resort)
            where = user or lastf
            text = (f"Python traceback cut off before its exception line: the call failed in File \"{lastf.path}\", "
                    f"line {lastf.line}, in {lastf.function} ({frames} frame(s) shown)"
                    + (f"; your code: File \"{where.path}\", line {where.line}, in {where.function}" if user else ""))
            self.seq += 1
            stats.hits += 1
            yield Hit(file=name, line=max(1, stats.lines), text=text, match=LineMatch([], [], [], []),
                      rank=rank if isinstance(rank, int) else path_rank, time=None,
                      frame=Frame(where.path, where.line, where.function), seq=self.seq, salient=True)
        self._tb.end()
        for rank, tr in self._trackers.items():
            events = tr.finish()
            if events:
                ev = events[0]
                self.seq += 1
                yield Hit(file=name, line=ev.line, text=ev.text.strip(), match=LineMatch([], [], [], []),
                          rank=rank, time=None, frame=None, seq=self.seq, events=events)

    def _lines(self, buf: bytes, cut: int) -> Iterator[tuple]:
        """``(line_start, line_end, metrics)`` of the lines of ``buf[:cut]`` to look at:
        those the trigger hits, every line while a traceback is open, and the
        metric lines chosen as described at :data:`FULL_HEAD` (``metrics`` true)."""
        pos = 0
        tb = self._tb
        ctx = self.context
        base = self.base
        hot_search = metrics_mod.HOT.search
        met_search = _METRIC_TRIGGER.search
        hot = -1  # start of the next HOT match at or after pos (cut: none)
        sample = SAMPLE
        t_key, t_at = None, -1  # the trigger last searched and the start of its next match (cut: none)
        while pos < cut:
            full = base + pos < self.full_until
            if tb.active or (self._launcher_left and base + pos < self._launcher_until) or (
                    self._follow_left and base + pos < self._follow_until):
                ls, kind = pos, full
            else:
                key = (full, not ctx.complete and base + pos < CONTEXT_HEAD)
                if key != t_key or t_at < pos:  # a match found before is still the next one until pos passes it
                    m = self.triggers[key].search(buf, pos, cut)
                    t_key, t_at = key, (m.start() if m is not None else cut)
                cand = t_at
                kind = full
                if not full:
                    if hot < pos:
                        hm = hot_search(buf, pos, cut)
                        hot = hm.start() if hm is not None else cut
                    if hot <= cand:
                        cand, kind = hot, True
                        self.full_until = base + hot + FULL_AFTER_HOT
                    elif sample <= cand:
                        sm = met_search(buf, sample, cand)
                        if sm is not None:
                            cand, kind = sm.start(), True
                        sample = max(sample, cand) + SAMPLE
                if cand >= cut:
                    return
                ls = buf.rfind(b"\n", 0, cand) + 1
                if ls < pos:
                    ls = pos
            le = buf.find(b"\n", ls, cut)
            if le < 0:
                le = cut
            yield ls, le, kind
            pos = le + 1

    def _time(self, buf: bytes, ls: int, le: int, text: str) -> Optional[float]:
        t, self.year = parse_time(text, self.year)
        if t is None:
            t = _ts(buf, max(0, ls - LOOKBACK), ls, self.year)
        return t

    def _region(self, buf: bytes, cut: int, name: str, stats: FileStats, path_rank: Optional[int], lines_before: int) -> Iterator[Hit]:
        counted_pos, counted = 0, 0
        ym = _TS.search(buf, 0, min(cut, 1 << 16))
        if ym is not None and 1990 < int(ym.group(1)) < 2200:
            self.year = int(ym.group(1))  # for year-less stamps (glog W0501, vLLM 05-01) of this region
        ctx = self.context
        for ls, le, metric_ok in self._lines(buf, cut):
            counted += buf.count(b"\n", counted_pos, ls)
            counted_pos = ls
            if le - ls < MAX_LINE * 4:
                raw = buf[ls:le]
            else:  # a very long line: a window around the first trigger hit
                m = self.trigger.search(buf, ls, le)
                start = ls if m is None or m.start() - ls < MAX_LINE else m.start() - MAX_LINE // 2
                raw = buf[start:start + MAX_LINE * 4]
            text = decode(raw).rstrip("\r").replace("\x00", "")
            lineno = lines_before + counted + 1
            prank, body = prefix_rank(text)
            exc = None
            if self._tb.active or _TB_TRIGGER.search(raw) or b"above exception" in raw or (
                    b'File "' in raw and _FRAME_TRIGGER.match(strip_log_prefix(body)[1].encode("utf-8", "replace"))):
                pid, tb_body = strip_log_prefix(body)
                exc = self._tb.feed(prank if prank is not None or pid is None else ("pid", pid), tb_body)
            elif b"rror: " in raw or b"xception: " in raw:
                exc = bare_exception(strip_log_prefix(body)[1])
            events = []
            if metric_ok and (_METRIC_TRIGGER.search(raw) or metrics_mod.SCALE_MIN_MSG in body):
                events = self._metrics(prank if prank is not None else path_rank, body, lineno, self.base + le)
            if self._tb.active and "framework" not in ctx.values and _FRAMEWORK_TRIGGER.search(raw):
                ctx.feed_framework(body, name, lineno)  # a traceback frame in site-packages/vllm_ascend/… names it
            if not ctx.complete and self.base + ls < CONTEXT_HEAD and self._context_trigger.search(raw):
                ctx.feed(body, name, lineno)
                self._ctx_trigger_update()
            if self._launcher_left:  # the rows after torch elastic's "Root Cause (first observed failure):"
                self._launcher_left -= 1
                r = launcher_rank(body)
                if r is not None:
                    self._launcher_left = 0
                    if "launcher_first_rank" not in self.context.values:
                        self.context.values["launcher_first_rank"] = {"value": r, "from": "log", "file": name, "line": lineno,
                                                                      "text": body.strip()[:200]}
            elif LAUNCHER_ROOT in body:
                self._launcher_left = 8
                self._launcher_until = self.base + le + 2048
            lm = None
            if self.kb_trigger.search(raw):
                lm = self.matcher.match_line(text)
                if b"\\n" in raw:  # an error body pasted as one line with literal \n escapes (JSON, HTTP replies)
                    lm = self._match_escaped(text, lm)
            why = ""
            following = self._follow_left > 0
            if following:
                self._follow_left -= 1
            coded = lm is not None and (lm.cann_codes or lm.acl_codes or lm.err_codes or any(
                sg.family in ("cann-code", "acl-code", "torch-npu-code", "atc") or sg.role == "wrapper" or sg.priority < 0
                for sg, _g in lm.signatures))
            if coded or _FOLLOW_RE.search(raw):
                self._follow_left = FOLLOW_LINES
                self._follow_until = self.base + le + (FOLLOW_LINES << 10)
            if exc is None and (coded or (not self._tb.active and (following or b"[ERROR]" in raw)
                                          and reason_mod.continuation(body, following))):
                # the first [ERROR] line of a chain states the reason itself, not only the lines after it; the
                # indented source lines of a Python traceback printed after a CANN line are no continuation of it
                why = reason_mod.extract(body)
            salient = bench = False
            if lm is None and exc is None and not events and not why:
                if _BENCH.search(raw):
                    bench = True
                elif not _SALIENT.search(raw):
                    continue
                else:
                    salient = True
            if lm is None:
                lm = LineMatch([], [], [], [])
            rank = prank if prank is not None else rank_in_text(text)
            if rank is None or rank < 0:
                rank = path_rank
            stats.hits += 1
            t = self._time(buf, ls, le, text)
            self.seq += 1
            frame = None
            if exc is not None and exc.frame is not None:
                frame = Frame(exc.frame.path, exc.frame.line, exc.frame.function)
            elif prank is None and (lm.signatures or lm.cann_codes or lm.acl_codes or lm.err_codes):
                # the nearest frame above; not for rank-prefixed lines, whose tracebacks the reader follows per rank
                # (the frame above may be another rank's)
                frame = _frame(buf, max(0, ls - LOOKBACK), ls)
            yield Hit(
                file=name, line=lineno, text=text[:MAX_LINE].strip(), match=lm, rank=rank, time=t,
                frame=frame, seq=self.seq, exc=exc, events=events, reason=why, salient=salient, bench=bench,
            )

    def _match_escaped(self, text: str, whole: Optional[LineMatch]) -> Optional[LineMatch]:
        """Add what the ``\\n``-separated pieces of one physical line match on their own
        (signatures anchored at a line start) to the match of the whole line, whose
        order (the catalogue's priorities) is kept."""
        pieces = text.split("\\n")
        if len(pieces) < 2:
            return whole
        sigs = list(whole.signatures) if whole else []
        cann = list(whole.cann_codes) if whole else []
        acl = list(whole.acl_codes) if whole else []
        err = list(whole.err_codes) if whole else []
        seen = {sg.id for sg, _ in sigs}
        added = False
        for piece in pieces[:200]:
            lm = self.matcher.match_line(piece)
            if lm is None:
                continue
            for sg in lm.signatures:
                if sg[0].id not in seen:
                    seen.add(sg[0].id)
                    sigs.append(sg)
                    added = True
        if not added:
            return whole
        dropped = {x for sg, _ in sigs for x in getattr(sg, "supersedes", ())}
        sigs = sorted((h for h in sigs if h[0].id not in dropped), key=lambda h: -getattr(h[0], "priority", 0))
        claimed = {c for sg, _ in sigs for c in sg.codes} | {c for sg, _ in sigs for c in getattr(sg, "on_code", ())}
        return LineMatch(sigs, [c for c in cann if c not in claimed], [c for c in acl if str(c) not in claimed],
                         [e for e in err if "ERR" + e[0] + e[1] not in claimed])

    def _metrics(self, rank: Optional[int], body: str, lineno: int, end: int) -> list:
        tr = self._trackers.get(rank)
        if tr is None:
            if len(self._trackers) >= 4096:
                return []
            tr = self._trackers[rank] = metrics_mod.Tracker()
        if metrics_mod.SCALE_MIN_MSG in body:
            return tr.scale_at_minimum(lineno, body)
        values = metrics_mod.parse_metrics(body)
        if not values:
            return []
        if end >= self.full_until and metrics_mod.anomalous(values, tr.floor):
            self.full_until = end + FULL_AFTER_HOT
        return tr.feed(values, lineno, body)


def expand_inputs(paths: tuple) -> tuple[list, list]:
    """Files to read for ``paths`` (files, folders walked recursively in sorted
    order, ``-``), and notes about what was skipped.  Raises ``AscendifyError``
    for a path that does not exist."""
    files, notes = [], []
    for p in paths:
        if p == "-":
            files.append("-")
            continue
        if not os.path.exists(p):
            raise AscendifyError(f"{p}: no such file or folder (expected a log file, a folder of rank logs or plogs, or '-' for stdin)")
        if os.path.isdir(p):
            found = 0
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for n in sorted(names):
                    if n.startswith("."):
                        continue
                    ext = os.path.splitext(n)[1].lower()
                    if ext in SKIP_EXT or ext in DOC_EXT or n.lower().startswith(DOC_NAMES):
                        continue
                    files.append(os.path.join(root, n))
                    found += 1
            if not found:
                notes.append(f"{p}: folder has no log files (expected *.log / *.txt / plog-*.log files)")
        else:
            files.append(p)
    return files, notes


def open_input(path: str) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    if path.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")
