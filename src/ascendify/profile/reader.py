"""Find and read the files of a torch_npu profiler run.

Layout (research notes ``accuracy-profiling-atc.md`` §4.1)::

    {host}_{pid}_{timestamp}_ascend_pt/
      ASCEND_PROFILER_OUTPUT/ kernel_details.csv op_statistic.csv step_trace_time.csv
                              trace_view.json communication.json operator_details.csv ...

CANN's ``msprof`` writes the same data as ``PROF_*/mindstudio_profiler_output/``
with ``op_summary_*.csv`` / ``op_statistic_*.csv`` / ``msprof_*.json``; both are
accepted.  Column names are normalised as the msprof-analyze advisor does
(§4.3): lower case, units ``(us)``/``(ns)``/``(%)`` dropped, other punctuation
→ ``_``, kernel_details names mapped to op_summary names (``name``→``op_name``,
``type``→``op_type``, ``accelerator_core``→``task_type``, ``duration``→
``task_duration`` …).  Values: surrounding whitespace and TABs stripped
(``"1736413971558972.912\t"``), doubled quotes removed, ``N/A`` → None.
"""

from __future__ import annotations

import csv
import glob
import gzip
import io
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from ascendify.errors import AscendifyError

PROFILER_FILES = ("kernel_details.csv", "op_statistic.csv", "step_trace_time.csv", "trace_view.json",
                  "communication.json", "operator_details.csv")
_ALIASES = {
    "name": "op_name", "type": "op_type", "accelerator_core": "task_type", "start_time": "task_start_time",
    "duration": "task_duration", "wait_time": "task_wait_time", "block_dim": "block_num", "mix_block_dim": "mix_block_num",
    "device_id": "device_id", "total_time": "total_time", "ratio": "ratio",
}
_UNIT = re.compile(r"\((?:us|ns|ms|%|mb|kb|gb/s)\)")
_NONALNUM = re.compile(r"[^a-z0-9]+")
NA = {"", "N/A", "NA", "n/a", "None", "null", "-"}


def norm_column(name: str) -> str:
    """``"Task Duration(us)"`` → ``task_duration``; ``"Communication (Not Overlapped)"`` →
    ``communication_not_overlapped``; ``"Accelerator Core"`` → ``task_type``."""
    n = name.strip().strip("\ufeff").strip('"').lower()
    n = _UNIT.sub("", n)
    n = _NONALNUM.sub("_", n).strip("_")
    return _ALIASES.get(n, n)


def clean(value: Optional[str]) -> Optional[str]:
    """Strip spaces, TABs and stray quotes; ``N/A`` and empty → None."""
    if value is None:
        return None
    v = value.strip().strip('"').strip()
    return None if v in NA else v


def num(value: Optional[str]) -> Optional[float]:
    """A cleaned field as float, or None when missing / not a number."""
    v = clean(value)
    if v is None:
        return None
    try:
        return float(v)
    except ValueError:
        return None


@dataclass
class Table:
    """A streamed CSV: normalised ``columns``, row dicts from :meth:`rows`, problems in ``notes``."""

    path: str
    columns: list
    raw_columns: list
    _text: str = field(repr=False, default="")
    notes: list = field(default_factory=list)
    bad_rows: int = 0

    def has(self, *cols: str) -> bool:
        return all(c in self.columns for c in cols)

    def rows(self) -> Iterator[dict]:
        """Yield ``{normalised column: cleaned str or None}``; short rows are padded
        (counted in ``bad_rows``), extra fields dropped."""
        reader = csv.reader(io.StringIO(self._text))
        next(reader, None)
        width = len(self.columns)
        short = 0
        for lineno, row in enumerate(reader, 2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) < width:
                short += 1
                row = row + [None] * (width - len(row))
            yield {c: clean(v) for c, v in zip(self.columns, row)}
        if short:
            self.bad_rows = short
            self.notes.append(f"{self.path}: {short} row(s) have fewer fields than the header (truncated?); missing values treated as N/A")


def _decode(data: bytes) -> str:
    for enc in ("utf-8-sig", "gb18030"):
        try:
            return data.decode(enc)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def read_table(path: str, required: tuple = (), what: str = "") -> tuple[Optional[Table], list]:
    """Open a profiler CSV.  Returns ``(table or None, notes)``; None (with a note
    naming the file and the expected columns) for empty, binary or unrecognised files."""
    notes: list = []
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return None, [f"{path}: cannot read ({exc.strerror or exc})"]
    if not data.strip():
        return None, [f"{path}: empty file (expected a CSV with a header line{' ' + what if what else ''})"]
    if data[:4096].count(b"\x00") > 16:
        data = data.replace(b"\x00", b"")
        notes.append(f"{path}: contains NUL bytes (binary junk?); read what remains")
    text = _decode(data).replace("\r\n", "\n").replace("\r", "\n")
    try:
        header = next(csv.reader(io.StringIO(text.split("\n", 1)[0])))
    except (csv.Error, StopIteration):
        return None, notes + [f"{path}: no CSV header line"]
    cols = [norm_column(h) for h in header]
    missing = [r for r in required if not any(alt in cols for alt in r.split("|"))]
    if missing:
        want = ", ".join(" or ".join(m.split("|")) for m in missing)
        return None, notes + [f"{path}: not a recognised profiler CSV: missing column(s) {want} (normalised names; header starts {', '.join(header[:6])!r})"]
    return Table(path, cols, header, text, notes), notes


def _salvage_events(text: str) -> tuple[list, bool]:
    """Decode as many Chrome-trace events as possible from a truncated JSON
    array (bare, or the ``traceEvents`` member); returns ``(events, truncated)``."""
    i = text.find("[", text.find('"traceEvents"') if '"traceEvents"' in text[:10000] else 0)
    if i < 0:
        return [], True
    dec = json.JSONDecoder()
    events = []
    pos = i + 1
    n = len(text)
    while pos < n:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n or text[pos] == "]":
            break
        try:
            obj, pos = dec.raw_decode(text, pos)
        except ValueError:
            return events, True
        if isinstance(obj, dict):
            events.append(obj)
    return events, False


def read_trace(path: str) -> tuple[list, list]:
    """Events of a Chrome trace (``trace_view.json`` is a bare array; torch.profiler
    writes ``{"traceEvents": [...]}``; ``.gz`` accepted).  A truncated file yields
    the events before the cut plus a note.  Returns ``(events, notes)``."""
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return [], [f"{path}: cannot read ({exc.strerror or exc})"]
    if not data.strip():
        return [], [f"{path}: empty file (expected a Chrome-trace JSON array of events)"]
    text = _decode(data)
    try:
        doc = json.loads(text)
    except ValueError:
        events, _ = _salvage_events(text)
        if not events:
            return [], [f"{path}: not valid JSON (expected a Chrome trace: a JSON array of events or {{\"traceEvents\": [...]}})"]
        return events, [f"{path}: JSON is truncated or corrupt; read the first {len(events)} event(s)"]
    if isinstance(doc, dict):
        doc = doc.get("traceEvents")
    if not isinstance(doc, list):
        return [], [f"{path}: JSON has no event list (expected a JSON array or a 'traceEvents' member)"]
    return [e for e in doc if isinstance(e, dict)], []


def read_json(path: str) -> tuple[Any, list]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return None, [f"{path}: cannot read ({exc.strerror or exc})"]
    if not data.strip():
        return None, [f"{path}: empty file"]
    try:
        return json.loads(_decode(data)), []
    except ValueError as exc:
        return None, [f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})"]


@dataclass
class ProfileDir:
    """The located files of one profiler run (absent files are None)."""

    root: str
    output: str
    files: dict


def _first(folder: str, names: tuple) -> Optional[str]:
    for n in names:
        if "*" in n:
            hits = sorted(glob.glob(os.path.join(folder, n)))
            if hits:
                return hits[-1]
        else:
            p = os.path.join(folder, n)
            if os.path.isfile(p):
                return p
    return None


_CANDIDATES = {
    "kernel_details.csv": ("kernel_details.csv", "op_summary_*.csv"),
    "op_statistic.csv": ("op_statistic.csv", "op_statistic_*.csv"),
    "step_trace_time.csv": ("step_trace_time.csv",),
    "trace_view.json": ("trace_view.json", "msprof_*.json"),
    "communication.json": ("communication.json",),
    "operator_details.csv": ("operator_details.csv",),
}


def locate(path: str) -> ProfileDir:
    """Find the profiler output folder for ``path``: a ``*_ascend_pt`` folder, its
    ``ASCEND_PROFILER_OUTPUT``, a msprof ``PROF_*`` folder or its
    ``mindstudio_profiler_output``, or a folder with exactly one such run.
    Raises ``AscendifyError`` naming what was expected where."""
    if not os.path.exists(path):
        raise AscendifyError(f"{path}: no such folder (expected a torch_npu profiler folder *_ascend_pt or its ASCEND_PROFILER_OUTPUT)")
    if os.path.isfile(path):
        raise AscendifyError(f"{path}: is a file; pass the profiler folder (*_ascend_pt or ASCEND_PROFILER_OUTPUT) that contains it")
    candidates = [path, os.path.join(path, "ASCEND_PROFILER_OUTPUT"), os.path.join(path, "mindstudio_profiler_output")]
    candidates += sorted(glob.glob(os.path.join(path, "PROF_*", "mindstudio_profiler_output")))
    for c in candidates:
        if os.path.isdir(c):
            files = {k: _first(c, v) for k, v in _CANDIDATES.items()}
            if any(files.values()):
                return ProfileDir(path, c, files)
    runs = sorted(glob.glob(os.path.join(path, "*_ascend_pt")))
    if len(runs) == 1:
        return locate(runs[0])
    if len(runs) > 1:
        names = ", ".join(os.path.basename(r) for r in runs[:6]) + (" …" if len(runs) > 6 else "")
        raise AscendifyError(f"{path}: holds {len(runs)} profiler runs ({names}); pass one of them (one per rank)")
    raise AscendifyError(
        f"{path}: no profiler data found (expected {', '.join(PROFILER_FILES[:5])} in {os.path.join(path, 'ASCEND_PROFILER_OUTPUT')} "
        "or in the folder itself; the profiler writes them when the run ends — check on_trace_ready=tensorboard_trace_handler(...) and that the run finished)"
    )
