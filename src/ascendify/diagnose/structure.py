"""Log structure for ``ascendify diagnose``: rank prefixes, timestamps and Python tracebacks.

Everything here works on one decoded line at a time and keeps a bounded
state per stream, so the scanner stays linear in time and bounded in memory.

* :func:`split_rank` — the rank a line belongs to and the line without its
  launcher prefix (``[rank3]:``, ``[default3]:``, ``[Rank 3]``, ``RANK 3:``,
  torchrun's ``[rank3]:[W501 ...]``, ``RankID:3`` of torch_npu's error suffix);
* :func:`parse_time` — the common timestamp shapes (ISO / Python logging,
  CANN plog ``YYYY-MM-DD-hh:mm:ss.mmm.uuu``, ``YYYY/MM/DD``, glog / c10
  ``W0501 10:00:00.123456``, vLLM ``05-01 10:00:00``);
* :class:`TracebackReader` — Python tracebacks, per rank, with chained
  exceptions (``During handling of the above exception ...``, ``The above
  exception was the direct cause ...``); for each exception line it gives the
  type, message, the user frame that raised it and the chain it belongs to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Optional

from ascendify.diagnose import components as components_mod

# ----------------------------------------------------------------- rank prefixes

_PREFIX = re.compile(
    r"^\s*(?:\[(?:rank|default|worker)\s?(\d{1,5})\]:?|(?:rank|RANK|Rank)\s?(\d{1,5})\s?[:|\]]|\[(?:Rank|RANK) (\d{1,5})\])"
)
_IN_LINE = [
    re.compile(r"RankID:(\d{1,5})\b"),
    re.compile(r"\[(?:rank|Rank|RANK)\s?(\d{1,5})\]"),
    re.compile(r"(?<![\w-])(?:rank|Rank|RANK)[ =:](\d{1,5})\b"),
]


def prefix_rank(line: str) -> tuple:
    """``(rank or None, body)`` from a leading launcher prefix only (cheap: one anchored match)."""
    m = _PREFIX.match(line)
    if m:
        return int(next(g for g in m.groups() if g is not None)), line[m.end():]
    return None, line


def rank_in_text(line: str) -> Optional[int]:
    """A rank the text names (``RankID:2``, ``[Rank 2]``, ``rank 2``), else None."""
    for rx in _IN_LINE:
        m = rx.search(line)
        if m:
            return int(m.group(1))
    return None


_LOG_PREFIX = re.compile(
    r"^(?:\((?P<who>[\w.-]{1,60}) pid=(?P<pid>\d{1,9})(?:, ip=[\d.]{7,15})?\) ?)?"
    r"(?:(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})? \[?[\w./-]{1,80}:\d{1,6}\] ?)?"
)


LAUNCHER_ROOT = "Root Cause (first observed failure)"
_LAUNCHER_RANK = re.compile(r"^\s*rank\s*:\s*(\d{1,5})\b")


def launcher_rank(line: str) -> Optional[int]:
    """The ``rank : N`` row of torch elastic's failure summary, else None."""
    m = _LAUNCHER_RANK.match(line)
    return int(m.group(1)) if m else None


def strip_log_prefix(body: str) -> tuple:
    """``(pid or None, body)`` without a Ray worker prefix (``(RayWorkerWrapper pid=123, ip=10.0.0.2)``)
    and a vLLM-style logger prefix (``ERROR 03-05 07:15:39 [engine.py:387]``), which vLLM / Ray put
    before every line of a traceback.

    >>> strip_log_prefix("(EngineCore_DP0 pid=1228) ERROR 03-30 03:00:55 [core.py:68]   File \"/a.py\", line 1, in f")
    (1228, '  File "/a.py", line 1, in f')
    """
    if not body or body[0] not in "(IWEDC":
        return None, body
    m = _LOG_PREFIX.match(body)
    if m is None or m.end() == 0:
        return None, body
    pid = m.group("pid")
    return (int(pid) if pid else None), body[m.end():]


def split_rank(line: str) -> tuple:
    """``(rank or None, body, prefixed)``: the rank a line names, the line
    without a leading launcher prefix, and whether the rank came from such a
    prefix (True) or from the text (``RankID:2``, ``rank 2``).

    >>> split_rank("[rank3]:[W501 10:00:00.1 ProcessGroupHCCL.cpp:9] x")
    (3, '[W501 10:00:00.1 ProcessGroupHCCL.cpp:9] x', True)
    >>> split_rank("[ERROR] 2026-05-01-10:00:00 (PID:1, Device:0, RankID:2) ERR00100")[0]
    2
    """
    m = _PREFIX.match(line)
    if m:
        r = next(g for g in m.groups() if g is not None)
        return int(r), line[m.end():], True
    for rx in _IN_LINE:
        m = rx.search(line)
        if m:
            return int(m.group(1)), line, False
    return None, line, False


# -------------------------------------------------------------------- timestamps

_TS_FULL = re.compile(
    r"(?<!\d)(\d{4})[-/](\d\d)[-/](\d\d)[- T_](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(?:\.(\d{1,3}))?"
)
_TS_GLOG = re.compile(r"(?<![\w])[IWEF](\d\d?)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?")
_TS_SHORT = re.compile(r"(?<![\d-])(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:[.,](\d{1,6}))?\b")


def parse_time(text: str, year: int = 2000) -> tuple:
    """``(seconds or None, year seen)`` of the first timestamp in ``text``.

    Year-less shapes (glog ``W0501 10:00:00``, vLLM ``05-01 10:00:00``) take
    ``year`` (the scanner passes the year of the last full timestamp of the
    stream).  Times are naive local times of the log, as seconds.
    """
    m = _TS_FULL.search(text)
    if m:
        g = m.groups()
        try:
            dt = datetime(int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), int(g[5]))
        except ValueError:
            return None, year
        frac = 0.0
        if g[6]:
            frac = int(g[6]) / 10 ** len(g[6])
            if g[7]:  # plog: .mmm.uuu
                frac += int(g[7]) / 10 ** (len(g[6]) + len(g[7]))
        return dt.timestamp() + frac, int(g[0])
    for rx in (_TS_GLOG, _TS_SHORT):
        m = rx.search(text)
        if m:
            g = m.groups()
            try:
                dt = datetime(year, int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]))
            except ValueError:
                return None, year
            frac = int(g[5]) / 10 ** len(g[5]) if g[5] else 0.0
            return dt.timestamp() + frac, year
    return None, year


# -------------------------------------------------------------------- tracebacks

LIBRARY_PARTS = ("site-packages", "dist-packages", "/lib/python", "/lib64/python", "\\lib\\", "/torch/", "/torch_npu/",
                 "<frozen")
"""A frame whose path contains one of these is library code, not the user's."""

_FRAME = re.compile(r'^\s*File "([^"]{1,500})", line (\d{1,7}), in (.{1,200})$')
_TB_START = "Traceback (most recent call last)"
CHAIN_CONTEXT = "During handling of the above exception, another exception occurred"
CHAIN_CAUSE = "The above exception was the direct cause of the following exception"
_EXC = re.compile(r"^([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*){0,8})(?::(?: (.*))?)?$")
_EXC_WORDS = ("Error", "Exception", "Interrupt", "Exit", "Failure", "Warning", "Timeout", "StopIteration", "Exceeded")
MAX_TB_LINES = 2000
"""A traceback that has not ended after this many lines is dropped (a truncated paste)."""


@dataclass
class PyFrame:
    path: str
    line: int
    function: str

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "function": self.function}


@dataclass
class ExcInfo:
    """The exception line of one traceback.

    ``chain`` numbers the chain within its stream; ``pos`` is 0 for the first
    traceback printed in a chain (Python prints the original exception first),
    ``link`` how this one is tied to the previous one (``"context"`` for
    *During handling of …*, ``"cause"`` for *… direct cause …*, ``""`` for the first).
    """

    type: str
    message: str
    frame: Optional[PyFrame]
    last_frame: Optional[PyFrame]
    chain: int
    pos: int
    link: str
    frames: int
    bare: bool = False  # an exception line outside any traceback (a one-line paste)
    component: Optional[tuple] = None  # (component, PyFrame): the framework code it was raised in (components.py)


_HEADER_TOKEN = re.compile(r"""\s*(?:
    \d{4}[-/]\d\d[-/]\d\d(?:[-T\ ]\d\d:\d\d:\d\d(?:[.,:]\d{1,9}){0,3})?Z?   # a date or timestamp
  | \d\d:\d\d:\d\d(?:[.,]\d{1,9})?
  | \[[^\]\n]{0,80}\]:?                                         # [2026-…] [ERROR] [core.py:586] [rank0]:
  | \([\w.-]{1,60}(?:\ [\w]{1,20}=[\w.:-]{1,40}){1,4}\)              # (VllmWorker rank=1 pid=881)
  | (?:ERROR|WARNING|WARN|CRITICAL|FATAL|INFO|DEBUG|Error|error)\b:?
  | [EWIF]\d{4}\ \d\d:\d\d:\d\d\.\d+\ +\d+\ [\w./-]{1,80}:\d{1,6}\]      # glog: E0501 10:00:00.123 123 x.py:12]
  | [\w.]{1,80}:[\w<>]{1,80}:\d{1,6}(?=\ )                           # loguru: module:function:12
  | [-|:>]{1,3}(?=\ )
  | \d{1,9}(?=\ )                                                # a pid or thread id
)""", re.X)
MAX_HEADER_TOKENS = 12


def strip_header(body: str) -> str:
    """``body`` without a leading log header of timestamps, levels, ``[...]`` groups, ``(Worker pid=1)``, glog and
    loguru locations and separators (``2026-03-01 10:00:01,123 - ERROR - ValueError: x`` -> ``ValueError: x``);
    prose before a message is kept (``we got ValueError: x`` stays as it is)."""
    pos = 0
    for _ in range(MAX_HEADER_TOKENS):
        m = _HEADER_TOKEN.match(body, pos)
        if m is None or m.end() == pos:
            break
        pos = m.end()
    return body[pos:].strip()


def bare_exception(body: str) -> Optional[ExcInfo]:
    """An exception line on its own (``RuntimeError: …`` with no traceback above it, after a log header such as
    ``2026-03-01 10:00:01,123 - ERROR - ``), else None."""
    stripped = body.strip()
    m = _EXC.match(stripped)
    if m is None or not m.group(2) or not _looks_like_exception(m.group(1)):
        stripped = strip_header(stripped)
        m = _EXC.match(stripped)
    if m is None or not m.group(2) or not _looks_like_exception(m.group(1)):
        return None
    return ExcInfo(type=m.group(1), message=m.group(2).strip(), frame=None, last_frame=None, chain=0, pos=0, link="",
                   frames=0, bare=True)


def is_user_frame(path: str) -> bool:
    """True when ``path`` is not inside site-packages / torch / torch_npu / the stdlib."""
    return not any(p in path for p in LIBRARY_PARTS)


def _looks_like_exception(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last[:1].isupper() and any(w in last for w in _EXC_WORDS) or last in ("KeyboardInterrupt", "SystemExit")


class _State:
    __slots__ = ("phase", "frame", "last", "real", "frames", "lines", "after", "pos", "link", "chain", "comp")

    def __init__(self, chain: int, pos: int, link: str):
        self.phase = "frames"
        self.frame: Optional[PyFrame] = None
        self.last: Optional[PyFrame] = None
        self.real: Optional[PyFrame] = None  # the last frame that is not the import machinery (<frozen importlib...>)
        self.frames = 0
        self.comp: Optional[tuple] = None  # (component, frame): the deepest framework frame (specific over catch-all)
        self.lines = 0
        self.after = 0
        self.chain, self.pos, self.link = chain, pos, link


class TracebackReader:
    """Follow the Python tracebacks of one stream, one state per rank.

    Feed it every line while :attr:`active` is true (the scanner does), and
    the lines a trigger finds otherwise; :meth:`feed` returns an
    :class:`ExcInfo` when the line is the exception line of a traceback.
    """

    def __init__(self) -> None:
        self.states: dict = {}  # rank -> _State (in a traceback) or ("after", ...) waiting for a chain marker
        self.pending: dict = {}  # rank -> (chain, pos, lines since the exception line, link or "")
        self.chains = 0
        self.n = 0  # lines fed
        self.started: dict = {}  # rank -> self.n when its traceback began

    @property
    def active(self) -> bool:
        return bool(self.states) or bool(self.pending)

    def feed(self, rank: Optional[int], body: str) -> Optional[ExcInfo]:
        self.n += 1
        if self.states and not self.n & 255:  # a traceback of a rank that never ends (truncated) stops the line-by-line reading
            for r in [r for r, n0 in self.started.items() if self.n - n0 > 4 * MAX_TB_LINES]:
                self.states.pop(r, None)
                self.started.pop(r, None)
        st = self.states.get(rank)
        stripped = body.strip()
        if _TB_START in body:
            pend = self.pending.pop(rank, None)
            if pend is not None and pend[3]:
                self.states[rank] = _State(pend[0], pend[1] + 1, pend[3])
            else:
                self.chains += 1
                self.states[rank] = _State(self.chains, 0, "")
            self.started[rank] = self.n
            return None
        pend = self.pending.get(rank)
        if pend is not None and st is None:
            if CHAIN_CONTEXT in body or CHAIN_CAUSE in body:
                self.pending[rank] = (pend[0], pend[1], 0, "context" if CHAIN_CONTEXT in body else "cause")
            elif stripped:
                n = pend[2] + 1
                if n > 6 or (pend[3] and n > 3):
                    self.pending.pop(rank, None)
                else:
                    self.pending[rank] = (pend[0], pend[1], n, pend[3])
            return None
        if st is None:
            if not _FRAME.match(body):
                return None
            # a frame line with no traceback open: a paste cut above its "Traceback (most recent call last):" header
            self.pending.pop(rank, None)
            self.chains += 1
            st = self.states[rank] = _State(self.chains, 0, "")
            self.started[rank] = self.n
        st.lines += 1
        if st.lines > MAX_TB_LINES:
            del self.states[rank]
            self.started.pop(rank, None)
            return None
        if not stripped:
            return None
        m = _FRAME.match(body)
        if m:
            fr = PyFrame(m.group(1), int(m.group(2)), m.group(3).strip())
            st.frames += 1
            st.last = fr
            if not fr.path.startswith("<frozen") and "/importlib/" not in fr.path:
                st.real = fr
            if is_user_frame(fr.path):
                st.frame = fr
            comp = components_mod.of_path(fr.path)
            if comp is not None and (st.comp is None or comp.specific or not st.comp[0].specific):
                st.comp = (comp, fr)
            return None
        if st.frames == 0:
            return None
        m = _EXC.match(stripped)
        if m is None or not _looks_like_exception(m.group(1)):
            return None  # a source line, ~~~^^^ markers, "[Previous line repeated N more times]", another process's line
        del self.states[rank]
        self.started.pop(rank, None)
        self.pending[rank] = (st.chain, st.pos, 0, "")
        return ExcInfo(type=m.group(1), message=(m.group(2) or "").strip(), frame=st.frame or st.last, last_frame=st.last,
                       chain=st.chain, pos=st.pos, link=st.link, frames=st.frames, component=st.comp)

    def open_tracebacks(self) -> list:
        """``[(rank, user frame or None, last frame, frames)]`` of the tracebacks still open (a paste cut off before
        the exception line), with at least one frame read."""
        return [(r, st.frame, st.real or st.last, st.frames) for r, st in self.states.items() if st.frames and st.last is not None]

    def end(self) -> None:
        self.states.clear()
        self.pending.clear()
        self.started.clear()
