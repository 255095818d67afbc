"""Reading user files: encodings (PEP 263, BOM), line endings, notebooks.

Every problem becomes a :class:`SourceProblem` (a parse-error finding), never
an exception: a scan goes on past a bad file.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import tokenize
import warnings
from dataclasses import dataclass, field
from typing import Optional, Union

MAX_FILE_BYTES = 5 * 1024 * 1024
"""Files larger than this (5 MB) are reported (SYN003) and skipped."""

CELL_MARKER = "# %% [ascendify cell {}]"
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=]")  # a PEP 263 line (tokenize's cookie_re, on bytes)
_CELL_RE = re.compile(r"^# %% \[ascendify cell (\d+)\]$")
MAGIC_PREFIX = "#ascendify-magic:"
"""A notebook line that is not Python (a magic, a shell line, a cell that does not parse) is
this prefix plus the line, at column 0.  A magic that is a statement of an indented block is
``<indent>pass  #ascendify-magic:<line without indent>`` (``x = !ls`` is ``x = None  ...``),
so a block whose body is only a magic still parses.  :func:`unmask_line` undoes both."""
_MAGIC_LINE = re.compile(r"^\s*(%|!|\?)|^\s*\w[\w.]*\?\??\s*$")
_MAGIC_ASSIGN = re.compile(r"^\s*([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)\s*=\s*[%!]")
_STUB = re.compile(r"^(\s*)\S.*?  " + re.escape(MAGIC_PREFIX) + r"(.*)$", re.S)
_TIME_MAGIC = re.compile(r"^%(?:time|timeit)(?:\s+-[nrp]\s*\d+|\s+-[tcqo])*\s+(?=[^\s-])")
CODE_MAGIC = "  #ascendify-magic-code:"
"""``%time stmt`` is ``pass; stmt  #ascendify-magic-code:%time `` in the virtual module: the
statement is analysed and fixed in place (``pass;`` plus spaces as wide as the magic)."""
_CELL_MAGIC = re.compile(r"^\s*%%(\w*)")
PYTHON_CELL_MAGICS = frozenset({"capture", "time", "timeit", "prun", "debug", "python", "python3"})
"""Cell magics whose body (the lines after the ``%%`` line) is Python run in the kernel; every
other cell magic (``%%bash``, ``%%writefile``, ``%%html``, ...) makes the whole cell not Python."""


@dataclass
class SourceProblem:
    """A file that could not be read or parsed; becomes a ``SYN`` finding."""

    code: str  # SYN001..SYN005
    message: str
    line: int = 1
    col: int = 0


@dataclass
class CellProblem:
    """A notebook code cell that does not parse on its own: reported as one SYN001 finding;
    the cell is left out of the analysis and written back as it was."""

    index: int  # index in the notebook's cell list
    cell: int  # 1-based code-cell number
    line: int  # 1-based line in the cell
    col: int  # 0-based column
    message: str
    text: str = ""  # the cell's source with magics masked
    bad_line: str = ""  # the text of the line Python rejected


@dataclass
class SourceFile:
    """A decoded Python source, with what is needed to write it back unchanged.

    For notebooks, ``text`` is a *virtual* module: each code cell after a marker line
    (:data:`CELL_MARKER`), its magics masked (:data:`MAGIC_PREFIX`), a cell that is not Python
    (``%%bash``) or does not parse on its own as comment lines (``cell_problems`` holds the
    latter); ``cell_of(line)`` maps a virtual line to ``(cell number, line in cell)``, also in
    a fixed version of the text (it reads the markers of ``text``).
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
    cell_problems: list = field(default_factory=list)  # CellProblem: code cells that do not parse
    opaque_cells: frozenset = frozenset()  # nb indexes of code cells kept as written (not Python, or broken)
    _starts: Optional[list] = field(default=None, init=False, repr=False, compare=False)

    @property
    def is_notebook(self) -> bool:
        return self.notebook is not None

    def _text_starts(self) -> list:
        """(virtual first line, cell number, nb index) of each cell, read from ``text``'s markers."""
        if self._starts is None:
            number = {idx: no for _, no, idx in self.cell_starts}
            starts = []
            for n, ln in enumerate(self.text.split("\n"), 1):
                m = _CELL_RE.match(ln) if ln.startswith("# %% [") else None
                if m and int(m.group(1)) in number:
                    starts.append((n + 1, number[int(m.group(1))], int(m.group(1))))
            self._starts = starts
        return self._starts

    def cell_of(self, line: int) -> tuple[Optional[int], Optional[int]]:
        """Virtual line → (1-based code-cell number, 1-based line in cell)."""
        if not self.cell_starts:
            return None, None
        found = None
        for first, cell_no, _ in self._text_starts():
            if first <= line:
                found = (cell_no, line - first + 1)
            else:
                break
        return found if found else (None, None)

    def json_line(self, line: int) -> Optional[int]:
        """Virtual line → the line of that source line in the notebook's JSON text (1-based): the
        element of the cell's ``"source"`` list as Jupyter writes it (one string per line), else the
        line of the ``"source"`` key; None for a .py file or a layout not recognised."""
        if not self.cell_starts:
            return None
        index = cell_line = None
        for first, _no, idx in self._text_starts():
            if first <= line:
                index, cell_line = idx, line - first + 1
            else:
                break
        if index is None:
            return None
        table = self.__dict__.get("_json_sources")
        if table is None:
            table = self.__dict__["_json_sources"] = _json_source_lines(self.raw)
        if index >= len(table) or table[index] is None:
            return None
        key_line, listed = table[index]
        return key_line + cell_line if listed else key_line

    def line_of(self, index: int, cell_line: int) -> int:
        """(nb cell index, 1-based line in the cell) → virtual line."""
        for first, _, idx in self._text_starts():
            if idx == index:
                return first + cell_line - 1
        return 1


def _newline_of(text: str) -> str:
    i = text.find("\n")
    if i > 0 and text[i - 1] == "\r":
        return "\r\n"
    if i < 0 and "\r" in text:
        return "\r"
    return "\n"


def final_eol(old: str, new: str) -> str:
    """``new`` with the line ending that ends ``old`` put back if a rewrite dropped it.

    A rewrite can lose a bare CR at the end of a module (LibCST, which earlier fix engines used,
    gave ``"x = 1\\r"`` back as ``"x = 1"``); no fix ever means to remove the last line ending.
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
        if _CODING.match(data.split(b"\n", 1)[0]) or _CODING.match(b"".join(data.split(b"\n", 2)[1:2])):
            return SourceProblem("SYN002", f"bad encoding declaration: {exc}")
        # no declaration: non-UTF-8 bytes on line 1 or 2 ("invalid or missing encoding declaration"),
        # reported as the decode error they are, with its line, as further down
        encoding = "utf-8"
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


class _LineState:
    """Whether the next line of a cell starts a statement (is not inside a string, brackets or
    a backslash continuation): only there can a line be an IPython magic."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: Optional[str] = None
        self.cont = False

    @property
    def at_statement(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.cont

    def feed(self, line: str) -> None:
        line = line[:-1] if line.endswith("\r") else line
        i, n, self.cont = 0, len(line), False
        escaped_eol = False
        while i < n:
            c = line[i]
            if self.quote is not None:
                if c == "\\":
                    escaped_eol = i == n - 1
                    i += 2
                elif line.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                else:
                    i += 1
                continue
            if c == "#":
                break
            if c in "\"'":
                self.quote = c * 3 if line.startswith(c * 3, i) else c
                i += len(self.quote)
                continue
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(0, self.depth - 1)
            elif c == "\\" and i == n - 1:
                self.cont = True
            i += 1
        if self.quote in ("'", '"') and not escaped_eol:
            self.quote = None  # an unterminated one-line string: a syntax error either way


def _comment(line: str, opaque: bool = False) -> str:
    # a line of a cell kept as written (``opaque``) is never unmasked: its text there must not
    # break the line (a lone CR would, to Python) nor hold a NUL
    return MAGIC_PREFIX + (line.replace("\r", " ").replace("\x00", " ") if opaque else line)


def mask_cell(source: str) -> tuple[list[str], set, bool]:
    """Mask the IPython syntax of one code cell, line for line.

    Returns (lines, {stub line index: forms to try next if Python rejects it}, is Python).  A magic (``%x``, ``!cmd``, ``x?``, with
    its ``\\`` continuation lines) at the start of a statement becomes a comment line, or an
    indented ``pass`` (``x = None`` for ``x = !cmd``) where it is a statement of a block;
    ``%time``/``%timeit`` with a one-line statement keeps the statement (:data:`CODE_MAGIC`); the
    first line of a ``%%capture``/``%%time`` cell a comment; every line of another cell magic
    (``%%bash``) a comment, and the cell is not Python.
    """
    lines = source.split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    out = list(lines)
    start = 0
    if first is not None:
        m = _CELL_MAGIC.match(lines[first])
        if m:
            if m.group(1) not in PYTHON_CELL_MAGICS:
                return [_comment(ln, True) for ln in lines], {}, False
            out[first] = _comment(lines[first])
            start = first + 1
    state = _LineState()
    stubs: dict = {}
    i = start
    while i < len(lines):
        ln = lines[i]
        assign = _MAGIC_ASSIGN.match(ln) if state.at_statement else None
        if state.at_statement and (assign or _MAGIC_LINE.match(ln)):
            body = ln.lstrip()
            indent = ln[: len(ln) - len(body)]
            forms = []
            timed = _TIME_MAGIC.match(body)
            if timed and not body.rstrip("\r").endswith("\\"):
                w = timed.end()
                forms.append(f"{indent}pass;{' ' * (w - 5)}{body[w:]}{CODE_MAGIC}{body[:w]}")
            if assign:
                forms.append(f"{indent}{assign.group(1)} = None  {_comment(body)}")
            elif indent:
                forms.append(f"{indent}pass  {_comment(body)}")
            forms.append(_comment(ln))
            out[i] = forms[0]
            if len(forms) > 1:
                stubs[i] = forms[1:]
            while ln.rstrip("\r").endswith("\\") and i + 1 < len(lines):
                i += 1
                ln = lines[i]
                out[i] = _comment(ln)
        else:
            state.feed(ln)
        i += 1
    return out, stubs, True


def unmask_line(line: str) -> str:
    """A line of the virtual module as it is written in its cell (magics as written)."""
    if line.startswith(MAGIC_PREFIX):
        return line[len(MAGIC_PREFIX):]
    if CODE_MAGIC in line:
        code, _, magic = line.rpartition(CODE_MAGIC)
        indent = code[: len(code) - len(code.lstrip())]
        return indent + magic + code[len(indent) + len(magic):]
    if MAGIC_PREFIX in line:
        m = _STUB.match(line)
        if m:
            return m.group(1) + m.group(2)
    return line


def _parse_cell(lines: list[str], stubs: dict) -> Optional[CellProblem]:
    """None if the masked cell parses; a stub that Python rejects (``pass`` at an indent that
    opens no block, ``pass; for ...``) is given its next form (at last a comment line) and the
    cell tried again."""
    stubs = {k: list(v) for k, v in stubs.items()}
    while True:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse("\n".join(lines) + "\n")
            return None
        except SyntaxError as exc:
            k = (exc.lineno or 1) - 1
            if stubs.get(k):
                lines[k] = stubs[k].pop(0)
                continue
            return CellProblem(-1, 0, exc.lineno or 1, max((exc.offset or 1) - 1, 0), f"syntax error: {exc.msg}", bad_line=exc.text or "")
        except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
            return CellProblem(-1, 0, 1, 0, f"cannot parse: {exc}")


def _json_source_lines(raw: bytes) -> list:
    """For each cell of a notebook's JSON (in order): (line of its ``"source"`` key, whether the list
    of lines starts on the next line), or None where the layout is not the one Jupyter writes."""
    try:
        lines = raw.decode("utf-8-sig").split("\n")
    except UnicodeDecodeError:
        return []
    out: list = []
    open_cell = False
    for n, ln in enumerate(lines, 1):
        t = ln.strip()
        if t.startswith('"cell_type":'):
            if open_cell:
                out.append(None)
            open_cell = True
        elif open_cell and t.startswith('"source":'):
            out.append((n, t.rstrip(",").endswith("[")))
            open_cell = False
    if open_cell:
        out.append(None)
    return out


def read_notebook(path: str) -> Union[SourceFile, SourceProblem]:
    """Read a Jupyter notebook (nbformat 4) into a virtual module of its code cells.

    Each code cell is masked (:func:`mask_cell`) and parsed on its own; one that does not
    parse is a :class:`CellProblem` and comment lines in the module, so the other cells
    are still analysed (names resolve across cells, in order, as in one kernel)."""
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
        problems = []
        opaque = set()
        cell_no = 0
        for idx, cell in enumerate(cells):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            cell_no += 1
            lines.append(CELL_MARKER.format(idx))
            starts.append((len(lines) + 1, cell_no, idx))
            source = _cell_source(cell)
            masked, stubs, python = mask_cell(source)
            problem = _parse_cell(masked, stubs) if python else None
            if problem is not None:
                problem.index, problem.cell, problem.text = idx, cell_no, "\n".join(masked)
                problems.append(problem)
                masked = [_comment(ln, True) for ln in source.split("\n")]
            if problem is not None or not python:
                opaque.add(idx)
            lines.extend(masked)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        return SourceProblem("SYN004", f"not a readable Jupyter notebook ({exc}); open and re-save it in Jupyter")
    text = "\n".join(lines) + "\n"
    return SourceFile(path=path, text=text, raw=data, notebook=nb, cell_starts=starts, cell_problems=problems,
                      opaque_cells=frozenset(opaque))


def read_source(path: str) -> Union[SourceFile, SourceProblem]:
    """Read a ``.py`` or ``.ipynb`` file; see :func:`read_python`, :func:`read_notebook`."""
    if path.endswith(".ipynb"):
        return read_notebook(path)
    return read_python(path)


def encode_source(src: SourceFile, new_text: str) -> bytes:
    """Encode fixed text the way the original file was stored.

    For ``.py`` files: same encoding, BOM kept, the final line ending kept, and
    CR line endings restored in a file read as CR-only.  For notebooks: the virtual
    module is split back into its cells, magics unmasked, and the notebook JSON
    re-serialised in the file's own JSON style (:func:`_dump_like`); a cell that is not Python or did
    not parse is kept as written (a line a fix put in its place goes to the cell before it).
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
    last_python = None
    for ln in new_text.split("\n"):
        m = _CELL_RE.match(ln)
        if m:
            current = int(m.group(1))
            cells[current] = []
            if current not in src.opaque_cells:
                last_python = current
            continue
        if current is None:
            continue  # text before the first cell (cannot happen unless a fix inserted it)
        if current in src.opaque_cells:
            if not ln.startswith(MAGIC_PREFIX) and last_python is not None:
                cells[last_python].append(ln)  # a line a fix added after the last statement before
            continue
        cells[current].append(unmask_line(ln))
    for idx, body in cells.items():
        if idx in src.opaque_cells:
            continue
        text = "\n".join(body).rstrip("\n")
        orig = _cell_source(nb["cells"][idx])
        text += "\n" * (len(orig) - len(orig.rstrip("\n")))  # keep the cell's trailing newlines
        if text == orig:
            continue
        parts = text.splitlines(keepends=True)
        nb["cells"][idx]["source"] = parts if isinstance(nb["cells"][idx].get("source"), list) else text
    return _dump_like(nb, src.raw)


def _dump_like(nb: dict, raw: bytes) -> bytes:
    """Serialise ``nb`` in the JSON style of the file it was read from (``raw``), so that a fix changes
    only the cells it touched: the same indent (Jupyter writes 1 space, Colab 2, some tools tabs or one
    line), ``\\uXXXX`` escapes if the file was pure ASCII, CRLF, a BOM and the final newline kept."""
    bom = raw.startswith(b"\xef\xbb\xbf")
    body = raw[3:] if bom else raw
    m = re.match(rb"\s*\{\r?\n([ \t]+)\S", body)
    indent = m.group(1).decode("ascii") if m else None
    if indent is not None and indent.strip(" ") == "":
        indent = len(indent)
    text = json.dumps(nb, indent=indent, ensure_ascii=body.isascii() and bool(body))
    if body.endswith(b"\n") or not body:
        text += "\n"
    if b"\r\n" in body:
        text = text.replace("\n", "\r\n")
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
