"""Streaming reader for ``ascendify diagnose``: files, folders, ``-`` (stdin), ``.gz``.

A log is read in 1 MiB blocks of bytes; the trigger pattern of the knowledge
base is searched over each block and only the lines it hits are decoded and
matched.  Memory is bounded by the block size plus ``MAX_CARRY`` (the longest
line kept whole); time is linear in the input size.  Each hit carries its
file, 1-based line number, rank (from the path or the line), timestamp (from
the line or the nearest earlier one in the block) and the nearest Python frame
(``File "...", line N``) above it.
"""

from __future__ import annotations

import codecs
import gzip
import os
import re
import sys
from dataclasses import dataclass
from datetime import datetime
from typing import BinaryIO, Iterator, Optional

from ascendify.diagnose.signatures import MAX_LINE, LineMatch, Matcher
from ascendify.errors import AscendifyError

BLOCK = 1 << 20
MAX_CARRY = 4 << 20
"""A "line" longer than this is cut into pieces (binary junk without newlines)."""
LOOKBACK = 4096
"""Bytes searched above a hit for its timestamp and Python frame."""

SKIP_EXT = {".pt", ".pth", ".bin", ".om", ".onnx", ".npy", ".npz", ".so", ".pyc", ".png", ".jpg", ".zip", ".tar", ".db",
            ".safetensors", ".ckpt", ".h5", ".pkl", ".whl"}

_RANK_PATH = re.compile(r"(?:^|[^a-z])(?:rank|worker|proc)[_-]?(\d{1,5})(?![0-9])", re.IGNORECASE)
_RANK_LINE = [
    re.compile(r"RankID:(\d{1,5})\b"),
    re.compile(r"^\[(?:rank|default)(\d{1,5})\]:"),
    re.compile(r"\brank[ =:](\d{1,5})\b"),
]
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
    for rx in _RANK_LINE:
        m = rx.search(line)
        if m:
            return int(m.group(1))
    return None


def _ts(buf: bytes, start: int, end: int) -> Optional[float]:
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
            return datetime(2000, int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4])).timestamp()
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


class Scanner:
    """Scan byte streams with one :class:`Matcher`; collect hits in order."""

    def __init__(self, matcher: Optional[Matcher] = None):
        self.matcher = matcher or Matcher()
        self.trigger = self.matcher.kb.trigger
        self.seq = 0

    def scan_stream(self, fh: BinaryIO, name: str, stats: FileStats, path_rank: Optional[int]) -> Iterator[Hit]:
        """Yield the hits of one stream, reading ``BLOCK`` bytes at a time."""
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
            if block:
                stats.bytes += len(block)
                newlines += block.count(b"\n")
                last = block[-1:]
            buf = carry + block if carry else block
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

    def _candidates(self, buf: bytes, cut: int) -> Iterator[tuple]:
        """``(line_start, line_end, first_hit)`` of each line of ``buf[:cut]`` that the trigger hits."""
        pos = 0
        search = self.trigger.search
        while True:
            m = search(buf, pos, cut)
            if m is None:
                return
            ls = buf.rfind(b"\n", 0, m.start()) + 1
            le = buf.find(b"\n", m.end(), cut)
            if le < 0:
                le = cut
            yield ls, le, m.start()
            pos = le + 1
            if pos >= cut:
                return

    def _region(self, buf: bytes, cut: int, name: str, stats: FileStats, path_rank: Optional[int], lines_before: int) -> Iterator[Hit]:
        counted_pos, counted = 0, 0
        for ls, le, hit in self._candidates(buf, cut):
            counted += buf.count(b"\n", counted_pos, ls)
            counted_pos = ls
            start = ls if hit - ls < MAX_LINE else hit - MAX_LINE // 2  # a window around the hit in a very long line
            raw = buf[start:min(le, start + MAX_LINE * 4)]
            text = decode(raw).rstrip("\r").replace("\x00", "")
            lm = self.matcher.match_line(text)
            if lm is None:
                continue
            stats.hits += 1
            rank = rank_from_line(text)
            if rank is None or rank < 0:
                rank = path_rank
            t = _ts(buf, ls, le)
            if t is None:
                t = _ts(buf, max(0, ls - LOOKBACK), ls)
            self.seq += 1
            yield Hit(
                file=name, line=lines_before + counted + 1, text=text[:MAX_LINE].strip(), match=lm, rank=rank, time=t,
                frame=_frame(buf, max(0, ls - LOOKBACK), ls), seq=self.seq,
            )


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
                    if ext in SKIP_EXT:
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
