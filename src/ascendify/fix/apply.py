"""Apply findings' fixes to one source, keeping everything else as written.

One engine, on the source text, as ruff does (its ``Edit``/``Fix`` with applicability is the
model): every edit of a fix becomes replacements of character ranges of the text
(:class:`Replacement`), found from the edit's position and the tokens of the code there;
``import`` and prelude statements become insertions at places computed once from the ``ast``
(and lines) of the text; then all of them are spliced in, in one pass.

Overlapping replacements are resolved by one rule (:func:`_merge`): a replacement inside a
larger one is dropped (the larger one rewrites that code, so that fix is done too), an insertion
at either end of a replacement goes beside it, and any other overlap (two different
replacements of one range, a partial overlap, two insertions at one offset) leaves the later
fix out whole, for the next pass.  Several argument edits of one call are made one after the
other on that call's text, as one replacement.  A fix whose edits cannot all be placed (the code
at its position is not what the edit needs) is dropped whole, never half-applied.

The replacements made are the source map of the rewrite (:class:`SourceMap`): the line of any
line of the old text in the new one comes from them, not from a diff.  Every result is
re-parsed (``ast``) before it is returned; one that does not parse leaves the file unchanged.
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Optional

from ascendify.diagnostics import Edit, Finding
from ascendify.scan.source import CELL_MARKER, SourceFile

_POS_KINDS = ("replace", "attr", "add_arg", "set_args", "string")
_ARG_KINDS = ("add_arg", "set_args")
_BREAK = re.compile(r"\r\n|\r|\n")
_SKIP_TOKENS = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)
_CELL_PREFIX = CELL_MARKER.split("{")[0]


@dataclass(frozen=True)
class Replacement:
    """``text[start:end]`` becomes ``new`` (offsets into the old text; ``start == end``: an insertion)."""

    start: int
    end: int
    new: str


@dataclass
class SourceMap:
    """The replacements (sorted, none overlapping) that turned ``old`` into ``new``: where each
    line of the old text is in the new one."""

    old: str
    new: str
    replacements: tuple = ()

    def lines(self) -> dict:
        """Old line -> new line (1-based) for every line of ``old``; None for a line whose code the
        rewrite replaced from a line above it and whose replacement has fewer lines.  A line keeps its
        number shifted by the line breaks inserted and removed above it; a line starting inside a
        replacement that spans lines maps to the same line of the replacement's text when it has one."""
        starts = _line_starts(self.old)
        n = len(starts) if starts[-1] < len(self.old) else len(starts) - 1  # a last line without a break counts
        reps = self.replacements
        out: dict = {}
        shift = 0  # line breaks added minus removed by the replacements before the current line
        k = 0
        for line in range(1, n + 1):
            o = starts[line - 1]
            while k < len(reps) and reps[k].end <= o:  # before the line (an insertion at its start too)
                r = reps[k]
                shift += _count_breaks(r.new, 0, len(r.new)) - _count_breaks(self.old, r.start, r.end)
                k += 1
            r = reps[k] if k < len(reps) else None
            if r is not None and r.start < o < r.end:  # the line starts inside a replacement
                skipped = _count_breaks(self.old, r.start, o)
                first = line - skipped  # the replacement starts on this old line
                out[line] = first + shift + skipped if _count_breaks(r.new, 0, len(r.new)) >= skipped else None
                continue
            out[line] = line + shift
        return out


def _count_breaks(text: str, a: int, b: int) -> int:
    if a >= b:
        return 0
    chunk = text[a:b]
    return chunk.count("\n") + chunk.count("\r") - chunk.count("\r\n")


@dataclass
class FixOutcome:
    """Result of fixing one file.

    ``text`` is the new source (equal to the old when nothing applied);
    ``applied`` the findings whose fix went in; ``skipped`` (finding, reason)
    pairs; ``error`` a one-line reason when the file was left untouched;
    ``tree`` the ``ast`` of the new text (parsed to check it), for the re-scan;
    ``source_map`` the replacements that made ``text`` (line maps for the change log).
    """

    text: str
    applied: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    error: Optional[str] = None
    tree: Optional[ast.Module] = field(default=None, compare=False, repr=False)
    source_map: Optional[SourceMap] = field(default=None, compare=False, repr=False)

    @property
    def changed(self) -> bool:
        return bool(self.applied)


def _select_fixes(findings: list[Finding], unsafe: bool) -> tuple[list, list]:
    """Fixes to try, in file order; overlapping fixes after the first are skipped."""
    chosen, skipped = [], []
    taken: list[tuple] = []
    for f in sorted(findings, key=Finding.sort_key):
        if f.fix is None:
            continue
        if not f.fix.safe and not unsafe:
            skipped.append((f, "unsafe fix (use --unsafe-fixes)"))
            continue
        ranges = [(e.start, e.end, e.kind, e.text) for e in f.fix.edits if e.kind in _POS_KINDS]
        clash = False
        for s, e, k, t in ranges:
            for s2, e2, k2, t2 in taken:
                if s < e2 and s2 < e and not (s == s2 and e == e2 and k == k2 and t == t2):
                    # nested edits on the same node are fine when one renames an inner part
                    if not ({k, k2} & {"attr", "set_args", "add_arg"}) or (s, e) == (s2, e2):
                        clash = True
        if clash:
            skipped.append((f, "overlaps another fix; run fix again"))
            continue
        taken.extend(ranges)
        chosen.append(f)
    return chosen, skipped


# ---------------------------------------------------------------------- one edit -> replacements
def _line_starts(text: str) -> list:
    starts = [0]
    starts.extend(m.end() for m in _BREAK.finditer(text))
    return starts


def _offset(starts: list, text: str, pos: tuple) -> Optional[int]:
    line, col = pos
    if line < 1 or line > len(starts):
        return None
    off = starts[line - 1] + col
    return off if off <= len(text) else None


class _NoPlace(Exception):
    """The code at an edit's position is not what the edit needs: its fix is dropped whole."""


def _tokens(snippet: str) -> list:
    """Significant tokens of ``snippet`` (a whole expression) as (type, string, start, end), offsets
    into ``snippet``."""
    if "\r" in snippet.replace("\r\n", ""):
        raise _NoPlace  # a bare CR inside: tokenize and ast may count lines differently
    starts = [0]
    for ln in snippet.splitlines(keepends=True):
        starts.append(starts[-1] + len(ln))
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(snippet).readline):
            if tok.type in _SKIP_TOKENS:
                continue
            out.append((tok.type, tok.string, starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1]))
    except (tokenize.TokenError, SyntaxError, IndexError):
        raise _NoPlace from None
    return out


def _call_parts(snippet: str) -> tuple:
    """(tokens, index of the ``(`` opening the argument list) of a Call's text."""
    toks = _tokens(snippet)
    if not toks or toks[-1][:2] != (tokenize.OP, ")") or toks[-1][3] != len(snippet):
        raise _NoPlace
    depth = 0
    for i in range(len(toks) - 1, -1, -1):
        t = toks[i]
        if t[0] == tokenize.OP and t[1] in ")]}":
            depth += 1
        elif t[0] == tokenize.OP and t[1] in "([{":
            depth -= 1
            if depth == 0:
                if t[1] != "(" or i == 0:
                    raise _NoPlace  # a parenthesised expression, not a call
                return toks, i
    raise _NoPlace


def _string_literal(prefix: str, quote: str, value: str) -> Optional[str]:
    """A str literal with ``prefix`` and ``quote`` whose value is ``value`` (None: a raw string
    cannot hold it)."""
    body = value
    if "r" not in prefix.lower():
        body = body.replace("\\", "\\\\")
    elif "\\" in body or quote[0] in body:
        return None
    body = body.replace(quote[0], "\\" + quote[0]) if len(quote) == 1 else body
    if len(quote) == 1 and "\n" in body:
        body = body.replace("\n", "\\n")
    return f"{prefix}{quote}{body}{quote}"


def _string_text(snippet: str, value: str) -> Optional[str]:
    """A plain string literal ``snippet`` with the value ``value``, same prefix and quotes (None: not a
    plain str literal: bytes, an f-string, implicit concatenation, a raw string that cannot hold it)."""
    toks = _tokens(snippet)
    if len(toks) != 1 or toks[0][0] != tokenize.STRING or toks[0][1] != snippet:
        return None
    i = 0
    while i < len(snippet) and snippet[i] not in "'\"":
        i += 1
    prefix, rest = snippet[:i], snippet[i:]
    if not set(prefix.lower()) <= {"r", "u"}:
        return None
    quote = rest[:3] if rest[:3] in ('"""', "\'\'\'") else rest[:1]
    return _string_literal(prefix, quote, value)


def _wrapped(snippet: str) -> bool:
    """Whether the ``(`` that starts ``snippet`` is closed by its last character."""
    toks = _tokens(snippet)
    depth = 0
    for i, t in enumerate(toks):
        if t[0] == tokenize.OP and t[1] in "([{":
            depth += 1
        elif t[0] == tokenize.OP and t[1] in ")]}":
            depth -= 1
            if depth == 0:
                return i == len(toks) - 1
    return False


def _edit_ops(edit: Edit, text: str, a: int, b: int) -> Optional[list]:
    """Replacements ``(start, end, new text)`` (offsets into ``text``) that make ``edit`` on the code
    at ``a``..``b``; None when the code there is not what the edit needs (the fix is dropped)."""
    try:
        return _ops_of(edit, text, a, b)
    except _NoPlace:
        return None


def _ops_of(edit: Edit, text: str, a: int, b: int) -> Optional[list]:
    snippet = text[a:b]
    kind = edit.kind
    if kind == "replace":
        if snippet.startswith("(") and _wrapped(snippet):
            return None  # a range that includes its own parentheses is not an expression's range
        return [(a, b, edit.text)]
    if kind == "string":
        new = _string_text(snippet, edit.text)
        return None if new is None else [(a, b, new)]
    if kind == "attr":
        toks = _tokens(snippet)
        if len(toks) < 3 or toks[-1][0] != tokenize.NAME or toks[-2][:2] != (tokenize.OP, "."):
            return None
        return [(a + toks[-1][2], a + toks[-1][3], edit.text)]
    if kind in _ARG_KINDS:
        toks, i = _call_parts(snippet)
        q = a + toks[-1][2]  # the closing parenthesis
        inner = toks[i + 1:-1]
        if kind == "set_args":
            return [(a + inner[0][2] if inner else q, q, edit.text)]
        if not inner:
            return [(q, q, edit.text)]
        if inner[-1][:2] == (tokenize.OP, ","):  # a trailing comma: the new argument gets one like it
            if len(inner) < 2:
                return None
            p = a + inner[-2][3]
            return [(q, q, edit.text + text[p:q])]
        p = a + inner[-1][3]
        if p == q:  # `f(a)`: one insertion
            return [(q, q, ", " + edit.text)]
        return [(p, p, ", "), (q, q, edit.text)]
    return None


def _splice(text: str, ops) -> str:
    """``text`` with the replacements ``ops`` (sorted, none overlapping) made."""
    out, last = [], 0
    for s, e, new in ops:
        out.append(text[last:s])
        out.append(new)
        last = e
    out.append(text[last:])
    return "".join(out)


def _call_ops(text: str, a: int, b: int, edits: list) -> Optional[list]:
    """The replacement that makes several argument edits of the call at ``a``..``b``, one after the
    other on its text (each sees the arguments the one before left); the part of the call that
    changed, so edits inside its arguments that the edits keep are still placed beside it."""
    snippet = text[a:b]
    cur = snippet
    for e in edits:
        ops = _edit_ops(e, cur, 0, len(cur))
        if ops is None:
            return None
        cur = _splice(cur, ops)
    pre = 0
    while pre < len(snippet) and pre < len(cur) and snippet[pre] == cur[pre]:
        pre += 1
    suf = 0
    while suf < len(snippet) - pre and suf < len(cur) - pre and snippet[-1 - suf] == cur[-1 - suf]:
        suf += 1
    return [(a + pre, b - suf, cur[pre:len(cur) - suf])]


# ---------------------------------------------------------------------- overlaps: one rule
# A replacement is (start, end, new text, rank): rank 1 for the arguments of a call (``set_args``, or
# several argument edits made as one), which hold the code of an argument edited by rank 0 edits
# even when their ranges are equal (``f(x)``: the arguments are ``x``).


def _inside(x: tuple, y: tuple) -> bool:
    """Replacement ``x`` lies inside the (non-empty) replacement ``y``, which rewrites that code:
    within its range (the same range only when ``y`` is the arguments of a call and ``x`` is not),
    and not an insertion at one of its ends."""
    s, e, ys, ye = x[0], x[1], y[0], y[1]
    if ys == ye or not (ys <= s and e <= ye):
        return False
    if (s, e) == (ys, ye):
        return y[3] > x[3]
    return not (s == e and s in (ys, ye))


def _clash(x: tuple, y: tuple) -> bool:
    """Whether replacements ``x`` and ``y`` cannot both be made: not equal, not one inside the
    other, and overlapping, or both inserting at one offset (no order to choose)."""
    if x[:3] == y[:3] or _inside(x, y) or _inside(y, x):
        return False
    (s, e), (ys, ye) = x[:2], y[:2]
    if s == e and ys == ye:
        return s == ys
    if (s, e) == (ys, ye):
        return True  # one range, two texts
    return s < ye and ys < e


def _merge(groups: list) -> tuple[list, set]:
    """(sorted replacements ``(start, end, text)`` to make, indexes of the groups left out).  ``groups``:
    per fix, in fix order, its replacements.  The rule: a replacement inside another is dropped (the
    other rewrites its code); a group with a replacement that clashes with one kept before it, or
    with another of its own, is left out whole."""
    kept: list = []
    dropped: set = set()
    for gi, ops in enumerate(groups):
        if any(_clash(x, y) for x in ops for y in kept) or any(_clash(x, y) for i, x in enumerate(ops) for y in ops[:i]):
            dropped.add(gi)
            continue
        kept.extend(x for x in ops if x not in kept)
    outer = [y for y in kept if y[0] < y[1]]
    final = [x for x in kept if not any(_inside(x, y) for y in outer)]
    final.sort(key=lambda o: (o[0], o[1]))
    out: list = []
    for s, e, t, _r in final:
        if not out or out[-1] != (s, e, t):  # one replacement made for two edits (rank 0 and 1)
            out.append((s, e, t))
    return out, dropped


# ---------------------------------------------------------------------- statements: where they go
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef) + tuple(getattr(ast, n) for n in ("Match", "TryStar") if hasattr(ast, n))


def _groups(body: list) -> list:
    """A block's statements, simple statements on one line (``a; b``) as one statement."""
    out: list = []
    for st in body:
        simple = not isinstance(st, _COMPOUND)
        if out and simple and out[-1][0] and st.lineno == out[-1][1][-1].end_lineno:
            out[-1][1].append(st)
        else:
            out.append((simple, [st]))
    return out


def _imports_of(g) -> list:
    """Modules that statement ``g`` imports from (absolute imports), with whether it binds the
    name ``torch`` (``import torch`` / ``import torch.x``, not ``import torch as t``)."""
    simple, stmts = g
    out = []
    if simple:
        for st in stmts:
            if isinstance(st, ast.Import):
                out.extend((al.name, al.asname is None) for al in st.names)
            elif isinstance(st, ast.ImportFrom) and st.module is not None and not st.level:
                out.append((st.module, False))
    return out


def _names(module: str, name: str) -> bool:
    return name == module or name.startswith(module + ".")


class _Stmt:
    """A statement of a block: a real one of the text (``g``) or one the fix inserts (``text``)."""

    __slots__ = ("g", "text", "imports", "any_import", "_code", "kind", "_layout")

    def __init__(self, g=None, text: str = "", layout: "Optional[_Layout]" = None, kind: str = ""):
        self.g = g
        self.text = text
        self.kind = kind  # inserted: "import" or "prelude"
        self._layout = layout
        if g is not None:
            self.imports = _imports_of(g)
            self.any_import = g[0] and any(isinstance(st, (ast.Import, ast.ImportFrom)) for st in g[1])
            self._code: Optional[str] = ""
        else:
            tree = ast.parse(text).body
            self.imports = _imports_of((True, tree))
            self.any_import = any(isinstance(st, (ast.Import, ast.ImportFrom)) for st in tree)
            self._code = text.strip()

    @property
    def code(self) -> Optional[str]:
        if self._code == "" and self._layout is not None:
            self._code = self._layout._code(self.g)
            self._layout = None
        return self._code

    def imports_module(self, module: str) -> bool:
        return any(_names(module, name) for name, _ in self.imports)

    def binds_torch(self) -> bool:
        return any(_names("torch", name) and plain for name, plain in self.imports)


class _Block:
    __slots__ = ("sub", "stmts", "indent")

    def __init__(self, sub: bool, stmts: list, indent: str):
        self.sub, self.stmts, self.indent = sub, stmts, indent


class _Layout:
    """The module's blocks outside functions and classes (the module body, then the bodies of
    top-level ``if``/``try``/``with`` blocks, where conditional imports live) with the statements the
    fixes insert, placed once from the ``ast`` of the text; the code of a statement is its text after
    the fix's replacements (``ops``)."""

    def __init__(self, text: str, tree: ast.Module, ops: list):
        self.text = text
        self.ops = ops
        self._op_starts = [o[0] for o in ops]
        self.starts = _line_starts(text)
        m = _BREAK.search(text)
        self.nl = m.group(0) if m else "\n"
        self.tree = tree
        self.blocks: list = []
        self._walk(tree.body, 0, False, "")
        self.module = self.blocks[0]

    # -- the text
    def line(self, n: int) -> str:
        s = self.starts[n - 1]
        e = self.starts[n] if n < len(self.starts) else len(self.text)
        return _BREAK.sub("", self.text[s:e])

    def _edited(self, a: int, b: int) -> str:
        """``text[a:b]`` with the replacements that lie inside it made (``ops`` are sorted)."""
        i = bisect.bisect_left(self._op_starts, a)
        inside = []
        while i < len(self.ops) and self.ops[i][0] <= b:
            s, e, t = self.ops[i]
            if e <= b and not (s == e and s in (a, b)):
                inside.append((s - a, e - a, t))
            i += 1
        return _splice(self.text[a:b], inside)

    def _code(self, g) -> Optional[str]:
        """The statement's code, stripped; when comment lines are right above it, they start it (as
        a concrete syntax tree would have them), so it equals no statement a fix inserts."""
        if not g[0]:
            return None
        first, last = g[1][0].lineno, g[1][-1].end_lineno
        a = self.starts[first - 1]
        b = self.starts[last] if last < len(self.starts) else len(self.text)
        body = self._edited(a, b).strip()
        k = first - 1
        while k >= 1 and (not self.line(k).strip() or self.line(k).lstrip().startswith("#")):
            if self.line(k).strip():
                return self.line(k).strip() + "\n" + body
            k -= 1
        return body

    def _indent_of(self, st) -> str:
        ln = self.line(st.lineno)
        return ln[:len(ln) - len(ln.lstrip())]

    def _walk(self, body: list, depth: int, sub: bool, indent: str) -> None:
        gs = _groups(body)
        self.blocks.append(_Block(sub, [_Stmt(g, layout=self) for g in gs], indent))
        if depth > 2:
            return
        for simple, stmts in gs:
            st = stmts[0]
            if not simple and isinstance(st, (ast.If, ast.With, ast.AsyncWith, ast.Try)) and st.body and \
                    not self.line(st.body[0].lineno)[:st.body[0].col_offset].strip():
                self._walk(st.body, depth + 1, True, self._indent_of(st.body[0]))

    def _cell_between(self, x: _Stmt, y: _Stmt) -> bool:
        """A notebook cell starts between real statements ``x`` and ``y`` (a cell marker line)."""
        if x.g is None or y.g is None:
            return False
        return any(self.line(n).startswith(_CELL_PREFIX) for n in range(x.g[1][-1].end_lineno + 1, y.g[1][0].lineno))

    def _has_docstring(self) -> bool:
        b = self.tree.body
        return bool(b) and isinstance(b[0], ast.Expr) and isinstance(b[0].value, ast.Constant) and isinstance(b[0].value.value, (str, bytes))

    # -- placing
    def add_import(self, stmt: str) -> None:
        """``stmt`` right after the first import of torch, in the block that holds it (a conditional
        ``import torch`` gets it in its own block), else after the last top-level import, else after
        the docstring, else at the top of the module."""
        imported = stmt.split()[1]  # "import X" / "from X import y"
        for blk in self.blocks:
            if any(s.imports_module(imported) and stmt.strip() == s.code for s in blk.stmts):
                return
            if stmt.startswith("import ") and any(s.imports_module(imported) for s in blk.stmts):
                return
        for blk in self.blocks:
            for i, s in enumerate(blk.stmts):
                if s.imports_module("torch"):
                    blk.stmts.insert(i + 1, _Stmt(text=stmt, kind="import"))
                    return
        body = self.module.stmts
        idx = None
        for i, s in enumerate(body):
            if s.any_import:
                idx = i
        if idx is None:
            idx = 0 if self._has_docstring() else -1
        body.insert(idx + 1, _Stmt(text=stmt, kind="import"))

    def add_prelude(self, stmt: str) -> None:
        """``stmt`` (which uses ``torch``) after the run of imports that holds ``import torch``, in
        the block where it is (a notebook: in the first cell that imports torch), so no statement
        below it that uses what it defines runs first; else after the module's imports."""
        for blk in self.blocks:
            if any(s.code == stmt.strip() for s in blk.stmts):
                return
        for blk in self.blocks:
            hit = next((i for i, s in enumerate(blk.stmts) if s.binds_torch()), None)
            if hit is None:
                continue
            j = hit
            for k in range(hit + 1, len(blk.stmts)):
                if not blk.stmts[k].any_import or self._cell_between(blk.stmts[j], blk.stmts[k]):
                    break
                j = k
            blk.stmts.insert(j + 1, _Stmt(text=stmt, kind="prelude"))
            return
        body = self.module.stmts
        idx = 0 if self._has_docstring() else -1
        for i, s in enumerate(body):
            if s.any_import:
                idx = i
        body.insert(idx + 1, _Stmt(text=stmt, kind="prelude"))

    def insertions(self) -> list:
        """The inserted statements as insertions ``(offset, offset, text)``: each after the real
        statement before it in its block (the statements inserted after one real statement, in
        their order), or at the top of the module, after its header comments."""
        out = []
        for blk in self.blocks:
            anchor = None
            pending: list = []
            for s in blk.stmts + [None]:
                if s is not None and s.g is None:
                    pending.append(s)
                    continue
                if pending:
                    out.append(self._insertion(blk, anchor, pending, s))
                    pending = []
                anchor = s
        return out

    def _insertion(self, blk: _Block, anchor: Optional[_Stmt], stmts: list, after: Optional[_Stmt]) -> tuple:
        nl = self.nl
        top = not blk.sub

        def piece(s: _Stmt) -> str:
            if s.kind == "prelude" and top:
                return nl + s.text
            return blk.indent + s.text

        if anchor is None:  # the top of the module: after the header (comment and blank lines)
            if after is not None:
                first = after.g[1][0]
                line = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", ())])
                at = self.starts[line - 1]
                return (at, at, "".join(piece(s) + nl for s in stmts))
            at = len(self.text)  # no statements at all
            lead = nl if self.text and not self.text.endswith(("\n", "\r")) else ""
            body = "".join(piece(s) + nl for s in stmts)
            if not self.text.endswith(("\n", "\r")):
                body = body[:-len(nl)]
            return (at, at, lead + body)
        end = anchor.g[1][-1].end_lineno
        if end < len(self.starts):
            at = self.starts[end]
            return (at, at, "".join(piece(s) + nl for s in stmts))
        at = len(self.text)  # the file ends on that line, without a line break
        return (at, at, "".join(nl + piece(s) for s in stmts))


def _statements(fixes: list[Finding], placed: set) -> tuple[list, list]:
    """(imports, preludes) that the ``placed`` fixes add, each once, in fix order."""
    imports, preludes = [], []
    for f in fixes:
        if id(f) in placed:
            for e in f.fix.edits:
                if e.kind == "add_import" and e.text not in imports:
                    imports.append(e.text)
                elif e.kind == "add_prelude" and e.text not in preludes:
                    preludes.append(e.text)
    return imports, preludes


# ---------------------------------------------------------------------- the engine
def _transform(text: str, fixes: list[Finding], tree: Optional[ast.Module] = None) -> tuple[SourceMap, set, set]:
    """Apply ``fixes`` to ``text``: the source map of the result, the ids of the fixes placed whole and
    of those left out because an edit clashes with an edit of a fix before them (or of their own)."""
    starts = _line_starts(text)
    located: dict = {}  # (start, end) -> offsets, or None

    def where(e: Edit):
        k = (e.start, e.end)
        if k not in located:
            a, b = _offset(starts, text, e.start), _offset(starts, text, e.end)
            located[k] = (a, b) if a is not None and b is not None and a <= b else None
        return located[k]

    # several argument edits of one call (one fix's: _select_fixes keeps one fix per call) are made
    # one after the other on the call's text, as one replacement
    calls: dict = {}
    for f in fixes:
        for e in f.fix.edits:
            if e.kind in _ARG_KINDS and e not in calls.setdefault((e.start, e.end), []):
                calls[(e.start, e.end)].append(e)
    call_ops: dict = {}
    for k, edits in calls.items():
        at = where(edits[0])
        if len(edits) > 1:
            got = None if at is None else _call_ops(text, at[0], at[1], edits)
            call_ops[k] = None if got is None else [(o[0], o[1], o[2], 1) for o in got]
    groups: list = []
    ok: list = []
    cache: dict = {}
    for f in fixes:
        mine: list = []
        good = True
        for e in f.fix.edits:
            if e.kind not in _POS_KINDS:
                continue
            k = (e.start, e.end)
            if e.kind in _ARG_KINDS and k in call_ops:
                got = call_ops[k]  # rank 1 already
            else:
                key = (e.kind, e.text, e.start, e.end)
                if key not in cache:
                    at = where(e)
                    got = None if at is None else _edit_ops(e, text, at[0], at[1])
                    rank = 1 if e.kind == "set_args" else 0
                    cache[key] = None if got is None else [(o[0], o[1], o[2], rank) for o in got]
                got = cache[key]
            if got is None:
                good = False
                break
            mine.extend(x for x in got if x not in mine)
        groups.append(mine)
        ok.append(good)
    final, dropped = _merge([g if good else [] for g, good in zip(groups, ok)])
    placed = {id(f) for i, f in enumerate(fixes) if ok[i] and i not in dropped}
    clashed = {id(fixes[i]) for i in dropped}
    # a call's replacement made for several fixes: each of them is placed only if all are
    for k, edits in calls.items():
        if len(edits) > 1:
            owners = [i for i, f in enumerate(fixes) if any(e.kind in _ARG_KINDS and (e.start, e.end) == k for e in f.fix.edits)]
            if any(id(fixes[i]) not in placed for i in owners):
                missing = {id(fixes[i]) for i in owners if id(fixes[i]) not in placed}
                smap, placed, again = _transform(text, [f for f in fixes if id(f) not in missing], tree)
                return smap, placed, clashed | again
    imports, preludes = _statements(fixes, placed)
    if imports or preludes:
        if tree is None:
            tree = ast.parse(text)
        layout = _Layout(text, tree, final)
        for stmt in reversed(preludes):
            layout.add_prelude(stmt)
        for stmt in imports:
            layout.add_import(stmt)
        # a statement goes in before a replacement at its offset (it ends the line before that code)
        final = sorted([(s, e, t, 1) for s, e, t in final] + [(s, e, t, 0) for s, e, t in layout.insertions()], key=lambda o: (o[0], o[3], o[1]))
        final = [(s, e, t) for s, e, t, _ in final]
    new = _splice(text, final)
    return SourceMap(text, new, tuple(Replacement(s, e, t) for s, e, t in final)), placed, clashed


PRELUDE_NAME = "DEVICE_TYPE"
"""The name the agnostic prelude defines (``ascendify.rules.checks.agnostic.NAME``)."""


def _used_before_defined(tree: ast.Module, name: str) -> set:
    """Lines where module-level code (not a function or lambda body) reads ``name`` before the
    module's first assignment to it, or everywhere if it is never assigned at module level."""
    defined = None
    uses = []
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue  # runs when called, after the module's statements
            if isinstance(child, ast.Name) and child.id == name:
                if isinstance(child.ctx, ast.Store):
                    defined = child.lineno if defined is None else min(defined, child.lineno)
                else:
                    uses.append(child.lineno)
            stack.append(child)
    return {ln for ln in uses if defined is None or ln < defined}


def apply_fixes(src: SourceFile, findings: list[Finding], unsafe: bool = False, tree: Optional[ast.Module] = None) -> FixOutcome:
    """Apply the (safe, or also unsafe) fixes of ``findings`` to ``src`` (``tree``: its ``ast``, if
    the caller has it).

    Never raises for user code: a rewrite that fails or a result that does not re-parse leaves the
    text unchanged and sets ``error``.
    """
    chosen, skipped = _select_fixes(findings, unsafe)
    if not chosen:
        return FixOutcome(src.text, [], skipped)
    try:
        smap, placed, clashed = _transform(src.text, chosen, tree)
        missing = [f for f in chosen if id(f) not in placed]
        if missing:  # drop fixes whose edits did not all land, then redo cleanly
            chosen = [f for f in chosen if id(f) in placed]
            skipped += [(f, "overlaps another fix; run fix again" if id(f) in clashed else "could not locate the code to rewrite") for f in missing]
            smap, placed, _ = _transform(src.text, chosen, tree) if chosen else (SourceMap(src.text, src.text), set(), set())
    except Exception as exc:  # noqa: BLE001 - a failing rewrite must not stop the run
        return FixOutcome(src.text, [], skipped + [(f, "rewrite failed") for f in chosen], f"cannot rewrite: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    for _ in range(3):
        try:
            new_tree = ast.parse(smap.new)
        except (SyntaxError, ValueError) as exc:  # pragma: no cover - a bug in a fix
            return FixOutcome(src.text, [], skipped + [(f, "rewrite did not re-parse") for f in chosen], f"rewrite did not re-parse ({exc}); file left unchanged")
        early = _used_before_defined(new_tree, PRELUDE_NAME)
        if not early:
            break
        # a fix that uses the prelude's name where the module (a notebook cell) runs before the prelude
        # defines it (a cell before the first `import torch`): NameError in the copy, so it is left out
        lines = smap.lines()
        bad = {id(f) for f in chosen if id(f) in placed and any(
            e.kind != "add_prelude" and lines.get(e.start[0]) in early for e in f.fix.edits)}
        if not bad:
            break
        skipped += [(f, f"would use {PRELUDE_NAME} before the prelude defines it (code that runs before the first `import torch`)") for f in chosen if id(f) in bad]
        chosen = [f for f in chosen if id(f) in placed and id(f) not in bad]
        if not chosen:
            return FixOutcome(src.text, [], skipped)
        smap, placed, _ = _transform(src.text, chosen, tree)
    return FixOutcome(smap.new, [f for f in chosen if id(f) in placed], skipped, tree=new_tree, source_map=smap)
