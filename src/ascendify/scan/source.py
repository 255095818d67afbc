"""Reading user files: encodings (PEP 263, BOM), line endings, notebooks.

Every problem becomes a :class:`SourceProblem` (a parse-error finding), never
an exception: a scan goes on past a bad file.
"""

from __future__ import annotations

import io
import json
import os
import re
import tokenize
from dataclasses import dataclass, field
from typing import Optional, Union

MAX_FILE_BYTES = 5 * 1024 * 1024
"""Files larger than this (5 MB) are reported (SYN003) and skipped."""

CELL_MARKER = "# %% [ascendify cell {}]"
_CELL_RE = re.compile(r"^# %% \[ascendify cell (\d+)\]$")
MAGIC_PREFIX = "#ascendify-magic:"
_MAGIC_LINE = re.compile(r"^\s*(%|!|\?)|^\s*\w[\w.]*\?\??\s*$")


@dataclass
class SourceProblem:
    """A file that could not be read or parsed; becomes a ``SYN`` finding."""

    code: str  # SYN001..SYN005
    message: str
    line: int = 1
    col: int = 0


@dataclass
class SourceFile:
    """A decoded Python source, with what is needed to write it back unchanged.

    For notebooks, ``text`` is a *virtual* module: code cells joined with
    marker lines, magics commented out; ``cell_of(line)`` maps a virtual line
    to ``(cell number, line in cell)``.
    """

    path: str
    text: str
    encoding: str = "utf-8"
    bom: bool = False
    newline: str = "\n"
    raw: bytes = b""
    notebook: Optional[dict] = None
    cell_starts: list = field(default_factory=list)  # (virtual first line, cell number, nb index)
    cr_only: bool = False  # the file's line endings are all bare CR; ``text`` has them as LF

    @property
    def is_notebook(self) -> bool:
        return self.notebook is not None

    def cell_of(self, line: int) -> tuple[Optional[int], Optional[int]]:
        """Virtual line → (1-based code-cell number, 1-based line in cell)."""
        if not self.cell_starts:
            return None, None
        found = None
        for first, cell_no, _ in self.cell_starts:
            if first <= line:
                found = (cell_no, line - first + 1)
            else:
                break
        return found if found else (None, None)


def _newline_of(text: str) -> str:
    i = text.find("\n")
    if i > 0 and text[i - 1] == "\r":
        return "\r\n"
    if i < 0 and "\r" in text:
        return "\r"
    return "\n"


def final_eol(old: str, new: str) -> str:
    """``new`` with the line ending that ends ``old`` put back if a rewrite dropped it.

    LibCST drops a bare CR at the end of a module (``"x = 1\\r"`` comes back as
    ``"x = 1"``); no fix ever means to remove the last line ending.
    """
    if new and not new.endswith(("\n", "\r")):
        if old.endswith("\r\n"):
            return new + "\r\n"
        if old.endswith(("\n", "\r")):
            return new + old[-1]
    return new


def read_python(path: str, data: Optional[bytes] = None) -> Union[SourceFile, SourceProblem]:
    """Read and decode a ``.py`` file (PEP 263 cookie or BOM honoured).

    Returns a :class:`SourceProblem` for binary data, undecodable bytes,
    over-size files or OS errors.  Never raises ``OSError``/``UnicodeError``.
    """
    if data is None:
        try:
            size = os.path.getsize(path)
            if size > MAX_FILE_BYTES:
                return SourceProblem("SYN003", f"file is {size / 1e6:.1f} MB, over the 5 MB limit; skipped (exclude it or split it)")
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            return SourceProblem("SYN003", f"cannot read file: {exc.strerror or exc}")
    if len(data) > MAX_FILE_BYTES:
        return SourceProblem("SYN003", f"file is {len(data) / 1e6:.1f} MB, over the 5 MB limit; skipped")
    if b"\x00" in data[:8192]:
        return SourceProblem("SYN003", "binary file with a .py name (NUL bytes); skipped")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return SourceProblem("SYN002", f"bad encoding declaration: {exc}")
    bom = encoding == "utf-8-sig"
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        line = data[: getattr(exc, "start", 0)].count(b"\n") + 1
        return SourceProblem("SYN002", f"cannot decode as {encoding}: {exc.reason if hasattr(exc, 'reason') else exc}; add a PEP 263 coding cookie or re-save as UTF-8", line)
    if bom and text.startswith("\ufeff"):
        text = text[1:]
    newline = _newline_of(text)
    # a file whose line breaks are all bare CR (old Mac style) is scanned and fixed with LF
    # breaks (the same module for Python) and written back with CR: see encode_source
    cr_only = newline == "\r" and "\n" not in text
    if cr_only:
        text = text.replace("\r", "\n")
    return SourceFile(path=path, text=text, encoding="utf-8" if bom else encoding, bom=bom, newline=newline, raw=data, cr_only=cr_only)


def _cell_source(cell: dict) -> str:
    src = cell.get("source", "")
    if isinstance(src, list):
        src = "".join(src)
    if not isinstance(src, str):
        raise ValueError("cell source is neither a string nor a list of strings")
    return src


def read_notebook(path: str) -> Union[SourceFile, SourceProblem]:
    """Read a Jupyter notebook (nbformat 4) into a virtual module of its code cells."""
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES * 4:
            return SourceProblem("SYN003", f"notebook is {size / 1e6:.1f} MB, over the 20 MB limit; skipped")
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return SourceProblem("SYN003", f"cannot read file: {exc.strerror or exc}")
    try:
        nb = json.loads(data.decode("utf-8-sig"))
        cells = nb["cells"]
        if not isinstance(cells, list):
            raise ValueError("'cells' is not a list")
        lines: list[str] = []
        starts = []
        cell_no = 0
        for idx, cell in enumerate(cells):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            cell_no += 1
            lines.append(CELL_MARKER.format(idx))
            starts.append((len(lines) + 1, cell_no, idx))
            for ln in _cell_source(cell).split("\n"):
                if _MAGIC_LINE.match(ln):
                    ln = MAGIC_PREFIX + ln
                lines.append(ln)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        return SourceProblem("SYN004", f"not a readable Jupyter notebook ({exc}); open and re-save it in Jupyter")
    text = "\n".join(lines) + "\n"
    return SourceFile(path=path, text=text, raw=data, notebook=nb, cell_starts=starts)


def read_source(path: str) -> Union[SourceFile, SourceProblem]:
    """Read a ``.py`` or ``.ipynb`` file; see :func:`read_python`, :func:`read_notebook`."""
    if path.endswith(".ipynb"):
        return read_notebook(path)
    return read_python(path)


def encode_source(src: SourceFile, new_text: str) -> bytes:
    """Encode fixed text the way the original file was stored.

    For ``.py`` files: same encoding, BOM kept, the final line ending kept, and
    CR line endings restored in a file read as CR-only.  For notebooks: the virtual
    module is split back into its cells and the notebook JSON re-serialised
    (1-space indent, as Jupyter writes it).
    """
    if not src.is_notebook:
        new_text = final_eol(src.text, new_text)
        if src.cr_only:
            new_text = new_text.replace("\r\n", "\n").replace("\n", "\r")
        data = new_text.encode(src.encoding)
        return (b"\xef\xbb\xbf" + data) if src.bom else data
    nb = json.loads(json.dumps(src.notebook))  # deep copy
    cells: dict[int, list[str]] = {}
    current = None
    for ln in new_text.split("\n"):
        m = _CELL_RE.match(ln)
        if m:
            current = int(m.group(1))
            cells[current] = []
            continue
        if current is None:
            continue  # text before the first cell (cannot happen unless a fix inserted it)
        if ln.startswith(MAGIC_PREFIX):
            ln = ln[len(MAGIC_PREFIX):]
        cells[current].append(ln)
    for idx, body in cells.items():
        text = "\n".join(body).rstrip("\n")
        orig = _cell_source(nb["cells"][idx])
        text += "\n" * (len(orig) - len(orig.rstrip("\n")))  # keep the cell's trailing newlines
        if text == orig:
            continue
        parts = text.splitlines(keepends=True)
        nb["cells"][idx]["source"] = parts if isinstance(nb["cells"][idx].get("source"), list) else text
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
