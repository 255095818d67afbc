"""Apply findings' fixes to one source, keeping everything else as written.

Two engines give the same text.  The default one (``ENGINE = "text"``) works on the
source text, as ruff does: every edit becomes one or two replacements of a character
range (found from the edit's position and the tokens of the code there), nested
replacements inside a larger one are dropped (the larger one rewrites that code), the
rest are spliced in, and ``import``/prelude statements are placed with the ``ast`` of
the result.  When an edit is one it cannot place exactly as the LibCST engine would
(two argument edits on one call, a statement to place in a file without imports, ...),
that file goes to the LibCST engine (``ENGINE = "cst"``): edits located by the LibCST
expression node whose range equals the range the ``ast`` check saw.

Either way the result is re-parsed (``ast``) before it is returned, and a fix whose
edits could not all be placed is dropped, never half-applied.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ascendify.diagnostics import Edit, Finding
from ascendify.scan.source import CELL_MARKER, SourceFile

_POS_KINDS = ("replace", "attr", "add_arg", "set_args", "string")


@dataclass
class FixOutcome:
    """Result of fixing one file.

    ``text`` is the new source (equal to the old when nothing applied);
    ``applied`` the findings whose fix went in; ``skipped`` (finding, reason)
    pairs; ``error`` a one-line reason when the file was left untouched;
    ``tree`` the ``ast`` of the new text (parsed to check it), for the re-scan.
    """

    text: str
    applied: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    error: Optional[str] = None
    tree: Optional[ast.Module] = field(default=None, compare=False, repr=False)

    @property
    def changed(self) -> bool:
        return bool(self.applied)


def _key(start, end) -> tuple:
    return (start[0], start[1], end[0], end[1])


class _Rewriter(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, edits: dict):
        super().__init__()
        self.edits = edits  # key -> list of Edit
        self.done: set = set()  # id(Edit) placed

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):  # type: ignore[override]
        if not isinstance(original, cst.BaseExpression):
            return updated
        try:
            pos = self.get_metadata(PositionProvider, original)
        except KeyError:
            return updated
        key = _key((pos.start.line, pos.start.column), (pos.end.line, pos.end.column))
        todo = self.edits.get(key)
        if not todo and getattr(original, "lpar", None):
            # LibCST's range includes the node's own parentheses; ast's does not
            inner = self._inner_key(original, pos)
            todo = self.edits.get(inner) if inner else None
        if not todo:
            return updated
        for edit in todo:
            if id(edit) in self.done:
                continue
            new = self._apply(edit, updated)
            if new is not None:
                self.done.add(id(edit))
                updated = new
        return updated

    @staticmethod
    def _inner_key(node: cst.CSTNode, pos) -> Optional[tuple]:
        if pos.start.line != pos.end.line:
            return None
        try:
            code = cst.Module([]).code_for_node(node)
            inner = cst.Module([]).code_for_node(node.with_changes(lpar=[], rpar=[]))
        except cst.CSTValidationError:  # e.g. `()`: an empty tuple cannot lose its parentheses
            return None
        left = code.find(inner)
        if left < 0:
            return None
        return (pos.start.line, pos.start.column + left, pos.end.line, pos.start.column + left + len(inner))

    @staticmethod
    def _apply(edit: Edit, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        if edit.kind == "attr":
            if isinstance(node, cst.Attribute):
                return node.with_changes(attr=cst.Name(edit.text))
            return None
        if edit.kind == "add_arg":
            if not isinstance(node, cst.Call):
                return None
            new_arg = cst.parse_expression(f"f({edit.text})").args[0]  # type: ignore[attr-defined]
            args = list(node.args)
            if args:
                last = args[-1]
                if isinstance(last.comma, cst.MaybeSentinel) or last.comma is cst.MaybeSentinel.DEFAULT:
                    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                else:  # trailing comma already there (multi-line call): keep the layout
                    new_arg = new_arg.with_changes(comma=last.comma)
            args.append(new_arg)
            return node.with_changes(args=args)
        if edit.kind == "set_args":
            if not isinstance(node, cst.Call):
                return None
            new_args = cst.parse_expression(f"f({edit.text})").args  # type: ignore[attr-defined]
            return node.with_changes(args=new_args)
        if edit.kind == "string":  # new value for a plain string literal, same prefix and quotes
            if not isinstance(node, cst.SimpleString) or "b" in node.prefix.lower():
                return None
            value = _string_literal(node.prefix, node.quote, edit.text)
            return None if value is None else node.with_changes(value=value)
        if edit.kind == "replace":
            new = cst.parse_expression(edit.text)
            if getattr(node, "lpar", None) and hasattr(new, "lpar"):
                new = new.with_changes(lpar=node.lpar, rpar=node.rpar)
            return new
        return None


def _string_literal(prefix: str, quote: str, value: str) -> Optional[str]:
    """A str literal with ``prefix`` and ``quote`` whose value is ``value`` (None: a raw string
    cannot hold it).  Both engines write a ``string`` edit with it."""
    body = value
    if "r" not in prefix.lower():
        body = body.replace("\\", "\\\\")
    elif "\\" in body or quote[0] in body:
        return None
    body = body.replace(quote[0], "\\" + quote[0]) if len(quote) == 1 else body
    if len(quote) == 1 and "\n" in body:
        body = body.replace("\n", "\\n")
    return f"{prefix}{quote}{body}{quote}"


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


def _stmt_code(stmt: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(stmt).strip()


def _is_import_of(stmt: cst.CSTNode, module: str) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Import):
            for alias in small.names:
                name = cst.Module([]).code_for_node(alias.name)
                if name == module or name.startswith(module + "."):
                    return True
        if isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
            name = cst.Module([]).code_for_node(small.module)
            if name == module or name.startswith(module + "."):
                return True
    return False


def _is_any_import(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)


def _has_docstring(body) -> bool:
    return bool(body) and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _binds_torch(stmt: cst.CSTNode) -> bool:
    """``import torch`` (or ``import torch.x``, which binds ``torch`` too; not ``import torch as t``)."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Import):
            for alias in small.names:
                name = cst.Module([]).code_for_node(alias.name)
                if (name == "torch" or name.startswith("torch.")) and alias.asname is None:
                    return True
    return False


def _blocks(body: list, depth: int = 0):
    """(path, statements) of the module's blocks outside functions and classes: the module body first,
    then the bodies of top-level ``if``/``try``/``with`` blocks (where conditional imports live)."""
    yield (), body
    if depth > 2:
        return
    for i, st in enumerate(body):
        for name, block in _sub_blocks(st):
            for path, stmts in _blocks(list(block.body), depth + 1):
                yield ((i, name),) + path, stmts


def _sub_blocks(st: cst.CSTNode):
    if isinstance(st, (cst.If, cst.With, cst.Try)) and isinstance(st.body, cst.IndentedBlock):
        yield "body", st.body


def _replace_block(body: list, path: tuple, new_stmts: list) -> list:
    if not path:
        return new_stmts
    (i, name), rest = path[0], path[1:]
    st = body[i]
    block = getattr(st, name)
    inner = _replace_block(list(block.body), rest, new_stmts)
    body = list(body)
    body[i] = st.with_changes(**{name: block.with_changes(body=inner)})
    return body


def _torch_block(module: cst.Module, binding: bool):
    """(path, statements, index) of the first statement importing torch — one that binds the name
    ``torch`` when ``binding`` — in the module body, else in a top-level conditional block."""
    for path, stmts in _blocks(list(module.body)):
        for i, s in enumerate(stmts):
            if (_binds_torch(s) if binding else _is_import_of(s, "torch")):
                return path, stmts, i
    return None


def _insert_import(module: cst.Module, stmt_text: str) -> cst.Module:
    """Insert ``stmt_text`` right after the first import of torch, in the block that holds it (a
    conditional ``import torch`` gets it in its own block), else after the last top-level import."""
    body = list(module.body)
    imported = stmt_text.split()[1]  # "import X" / "from X import y"
    for _path, stmts in _blocks(body):
        if any(_is_import_of(s, imported) and stmt_text.strip() == _stmt_code(s) for s in stmts):
            return module
        if stmt_text.startswith("import ") and any(_is_import_of(s, imported) for s in stmts):
            return module
    new = cst.parse_statement(stmt_text + "\n")
    found = _torch_block(module, binding=False)
    if found is not None:
        path, stmts, i = found
        stmts = list(stmts)
        stmts.insert(i + 1, new)
        return module.with_changes(body=_replace_block(body, path, stmts))
    idx = None
    for i, s in enumerate(body):
        if _is_any_import(s):
            idx = i
    if idx is None:
        idx = 0 if _has_docstring(body) else -1
    body.insert(idx + 1, new)
    return module.with_changes(body=body)


def _insert_prelude(module: cst.Module, stmt_text: str) -> cst.Module:
    """Insert ``stmt_text`` (which uses ``torch``) after the imports of the block where ``torch`` is
    imported: the module's imports when ``import torch`` is at top level, else the conditional block
    that imports it (so ``if is_torch_available(): import torch`` gets it inside)."""
    body = list(module.body)
    for _path, stmts in _blocks(body):
        if any(_stmt_code(s) == stmt_text.strip() for s in stmts):
            return module
    new = cst.parse_statement(stmt_text + "\n")
    found = _torch_block(module, binding=True)
    if found is not None:  # after the run of imports that holds `import torch`: before any use below it
        path, stmts, i = found
        stmts = list(stmts)
        j = i
        for k in range(i, len(stmts)):
            if _is_any_import(stmts[k]):
                j = k
            else:
                break
        if not path and hasattr(new, "leading_lines"):
            new = new.with_changes(leading_lines=[cst.EmptyLine()])
        stmts.insert(j + 1, new)
        return module.with_changes(body=_replace_block(body, path, stmts))
    idx = -1 if not _has_docstring(body) else 0
    for i, s in enumerate(body):
        if _is_any_import(s):
            idx = i
    new = new.with_changes(leading_lines=[cst.EmptyLine()]) if hasattr(new, "leading_lines") else new
    body.insert(idx + 1, new)
    return module.with_changes(body=body)


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


def _transform(text: str, fixes: list[Finding]) -> tuple[str, set]:
    """Apply ``fixes``; returns the new text and the ids of findings fully applied."""
    module = cst.parse_module(text)
    edits: dict[tuple, list[Edit]] = {}
    for f in fixes:
        for e in f.fix.edits:
            if e.kind in _POS_KINDS:
                bucket = edits.setdefault(_key(e.start, e.end), [])
                if all(x != e for x in bucket):
                    bucket.append(e)
    rewriter = _Rewriter(edits)
    new_module = MetadataWrapper(module, unsafe_skip_copy=True).visit(rewriter)
    placed = set()
    placed_edits = {(e.kind, e.text, e.start, e.end) for bucket in edits.values() for e in bucket if id(e) in rewriter.done}
    for f in fixes:
        if all((e.kind, e.text, e.start, e.end) in placed_edits for e in f.fix.edits if e.kind in _POS_KINDS):
            placed.add(id(f))
    imports, preludes = _statements(fixes, placed)
    for stmt in reversed(preludes):
        new_module = _insert_prelude(new_module, stmt)
    for stmt in imports:
        new_module = _insert_import(new_module, stmt)
    return new_module.code, placed


# ---------------------------------------------------------------------- the text engine
ENGINE = "text"
"""``"text"``: edits spliced into the text (LibCST only for a file with an edit it cannot
place the same way); ``"cst"``: every file through LibCST (the engine before; bench/fix_bench.py
times both)."""

_BREAK = re.compile(r"\r\n|\r|\n")
_SKIP_TOKENS = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)


_CELL_PREFIX = CELL_MARKER.split("{")[0]


class _NeedTree(Exception):
    """The text engine cannot place an edit exactly as the LibCST engine does: use that one."""


def _line_starts(text: str) -> list:
    starts = [0]
    starts.extend(m.end() for m in _BREAK.finditer(text))
    return starts


def _offset(starts: list, text: str, pos: tuple) -> int:
    line, col = pos
    if line < 1 or line > len(starts):
        raise _NeedTree
    off = starts[line - 1] + col
    if off > len(text):
        raise _NeedTree
    return off


def _tokens(snippet: str) -> list:
    """Significant tokens of ``snippet`` (a whole expression) as (type, string, start, end), offsets
    into ``snippet``."""
    if "\r" in snippet.replace("\r\n", ""):
        raise _NeedTree  # a bare CR inside: tokenize and ast may count lines differently
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
        raise _NeedTree from None
    return out


def _call_parts(snippet: str) -> tuple:
    """(tokens, index of the ``(`` opening the argument list) of a Call's text."""
    toks = _tokens(snippet)
    if not toks or toks[-1][:2] != (tokenize.OP, ")") or toks[-1][3] != len(snippet):
        raise _NeedTree
    depth = 0
    for i in range(len(toks) - 1, -1, -1):
        t = toks[i]
        if t[0] == tokenize.OP and t[1] in ")]}":
            depth += 1
        elif t[0] == tokenize.OP and t[1] in "([{":
            depth -= 1
            if depth == 0:
                if t[1] != "(" or i == 0:
                    raise _NeedTree
                return toks, i
    raise _NeedTree


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
    at ``a``..``b``, laid out as the LibCST engine lays them out; None when the code there is not what
    the edit needs (the fix is dropped)."""
    snippet = text[a:b]
    kind = edit.kind
    if kind == "replace":
        if snippet.startswith("(") and _wrapped(snippet):
            return None  # a tuple's own parentheses in its range: the LibCST engine finds no node there
        return [(a, b, edit.text)]
    if kind == "string":
        new = _string_text(snippet, edit.text)
        return None if new is None else [(a, b, new)]
    if kind == "attr":
        toks = _tokens(snippet)
        if len(toks) < 3 or toks[-1][0] != tokenize.NAME or toks[-2][:2] != (tokenize.OP, "."):
            return None
        return [(a + toks[-1][2], a + toks[-1][3], edit.text)]
    if kind in ("add_arg", "set_args"):
        toks, i = _call_parts(snippet)
        q = a + toks[-1][2]  # the closing parenthesis
        inner = toks[i + 1:-1]
        if kind == "set_args":
            return [(a + inner[0][2] if inner else q, q, edit.text)]
        call = ast.parse(f"f({edit.text})", mode="eval").body
        if len(call.args) + len(call.keywords) != 1 or "\n" in edit.text:  # type: ignore[attr-defined]
            raise _NeedTree  # LibCST adds the first argument only
        if not inner:
            return [(q, q, edit.text)]
        if inner[-1][:2] == (tokenize.OP, ","):  # a trailing comma: the new argument gets one like it
            if len(inner) < 2:
                raise _NeedTree
            p = a + inner[-2][3]
            return [(q, q, edit.text + text[p:q])]
        p = a + inner[-1][3]
        if p == q:  # `f(a)`: one insertion (two at one offset are more than _resolve can order)
            return [(q, q, ", " + edit.text)]
        return [(p, p, ", "), (q, q, edit.text)]
    raise _NeedTree


def _splice(text: str, ops: list) -> str:
    """``text`` with the replacements ``ops`` (sorted, none overlapping) made."""
    out, last = [], 0
    for s, e, new in ops:
        out.append(text[last:s])
        out.append(new)
        last = e
    out.append(text[last:])
    return "".join(out)


def _resolve(ops: list) -> list:
    """Sorted replacements without the ones inside a larger one (the LibCST engine rewrites the
    inner node first and the outer one then replaces it); partial overlaps cannot happen for
    edits of nested nodes, so one is a bug we do not guess at."""
    ops = sorted(set(ops), key=lambda o: (o[0], -o[1]))
    kept: list = []
    for s, e, new in ops:
        if kept:
            ks, ke, _ = kept[-1]
            if ks < ke and ks <= s and e <= ke and (ks < s or e < ke) and not (s == e and (s == ks or s == ke)):
                continue  # inside the previous replacement
            if s < ke or (s == e == ks == ke) or (s == ks and e == ke):
                raise _NeedTree
            if s == ke and s == e and ks == ke:
                raise _NeedTree
        kept.append((s, e, new))
    return kept


# ---- statements, as LibCST groups them: simple statements on one line are one statement
def _groups(body: list) -> list:
    out: list = []
    for st in body:
        simple = not isinstance(st, _COMPOUND)
        if out and simple and out[-1][0] and st.lineno == out[-1][1][-1].end_lineno:
            out[-1][1].append(st)
        else:
            out.append((simple, [st]))
    return out


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef) + tuple(getattr(ast, n) for n in ("Match", "TryStar") if hasattr(ast, n))


def _g_is_import_of(g, module: str) -> bool:
    simple, stmts = g
    if not simple:
        return False
    for st in stmts:
        if isinstance(st, ast.Import) and any(al.name == module or al.name.startswith(module + ".") for al in st.names):
            return True
        if isinstance(st, ast.ImportFrom) and st.module is not None and not st.level and (st.module == module or st.module.startswith(module + ".")):
            return True
    return False


def _g_any_import(g) -> bool:
    return g[0] and any(isinstance(st, (ast.Import, ast.ImportFrom)) for st in g[1])


def _g_binds_torch(g) -> bool:
    return g[0] and any(isinstance(st, ast.Import) and any((al.name == "torch" or al.name.startswith("torch.")) and al.asname is None for al in st.names) for st in g[1])


class _Text:
    """A source with its ``ast``, lines and offsets, for placing whole statements."""

    def __init__(self, text: str):
        self.text = text
        self.tree = ast.parse(text)
        self.starts = _line_starts(text)
        m = _BREAK.search(text)
        self.nl = m.group(0) if m else "\n"

    def line(self, n: int) -> str:
        """Line ``n`` (1-based) without its line break."""
        s = self.starts[n - 1]
        e = self.starts[n] if n < len(self.starts) else len(self.text)
        return _BREAK.sub("", self.text[s:e])

    def after(self, g) -> int:
        """Offset just after the line break that ends statement ``g``."""
        end = g[1][-1].end_lineno
        if end >= len(self.starts):
            raise _NeedTree  # the file ends on that line without a line break
        return self.starts[end]

    def indent(self, g) -> str:
        ln = self.line(g[1][0].lineno)
        return ln[:len(ln) - len(ln.lstrip())]

    def code(self, g) -> Optional[str]:
        """The statement's code as LibCST's ``code_for_node(...).strip()`` gives it; raises when
        comment lines right above it would be part of that."""
        if not g[0]:
            return None
        first, last = g[1][0].lineno, g[1][-1].end_lineno
        k = first - 1
        body = "\n".join(self.line(n) for n in range(first, last + 1)).strip()
        while k >= 1 and (not self.line(k).strip() or self.line(k).lstrip().startswith("#")):
            if self.line(k).strip():
                # LibCST's code for the statement starts with those comment lines, so it equals no
                # statement text the fix inserts: the same answer without a tree
                return self.line(k).strip() + "\n" + body
            k -= 1
        return body

    def blocks(self):
        """(in a sub-block, statement groups) as ``_blocks`` walks them."""
        def walk(body, depth, sub):
            gs = _groups(body)
            yield sub, gs
            if depth > 2:
                return
            for simple, stmts in gs:
                st = stmts[0]
                if not simple and isinstance(st, (ast.If, ast.With, ast.AsyncWith, ast.Try)) and st.body and self._indented(st.body[0]):
                    yield from walk(st.body, depth + 1, True)
        yield from walk(self.tree.body, 0, False)

    def cell_between(self, g, h) -> bool:
        """A notebook cell starts between statement groups ``g`` and ``h`` (a cell marker line)."""
        return any(self.line(n).startswith(_CELL_PREFIX) for n in range(g[1][-1].end_lineno + 1, h[1][0].lineno))

    def _indented(self, st) -> bool:
        return not self.line(st.lineno)[:st.col_offset].strip()

    def has_docstring(self) -> bool:
        b = self.tree.body
        return bool(b) and isinstance(b[0], ast.Expr) and isinstance(b[0].value, ast.Constant) and isinstance(b[0].value.value, (str, bytes))


def _text_insert_import(t: _Text, stmt_text: str) -> str:
    text = t.text
    imported = stmt_text.split()[1]
    for _sub, gs in t.blocks():
        if any(_g_is_import_of(g, imported) and stmt_text.strip() == t.code(g) for g in gs):
            return text
        if stmt_text.startswith("import ") and any(_g_is_import_of(g, imported) for g in gs):
            return text
    for _sub, gs in t.blocks():
        for g in gs:
            if _g_is_import_of(g, "torch"):
                at = t.after(g)
                return text[:at] + t.indent(g) + stmt_text + t.nl + text[at:]
    gs = _groups(t.tree.body)
    idx = None
    for i, g in enumerate(gs):
        if _g_any_import(g):
            idx = i
    if idx is None:
        if not t.has_docstring():
            raise _NeedTree  # top of the module: LibCST's header rules decide
        idx = 0
    at = t.after(gs[idx])
    return text[:at] + stmt_text + t.nl + text[at:]


def _text_insert_prelude(t: _Text, stmt_text: str) -> str:
    text = t.text
    for _sub, gs in t.blocks():
        if any(t.code(g) == stmt_text.strip() for g in gs):
            return text
    for sub, gs in t.blocks():
        hit = next((i for i, g in enumerate(gs) if _g_binds_torch(g)), None)
        if hit is None:
            continue
        # after the run of imports that holds `import torch` (a notebook: in the first cell that imports
        # torch), so no statement below it that uses DEVICE_TYPE runs first
        j = hit
        for k in range(hit + 1, len(gs)):
            if not _g_any_import(gs[k]) or t.cell_between(gs[j], gs[k]):
                break
            j = k
        at = t.after(gs[j])
        if sub:
            return text[:at] + t.indent(gs[j]) + stmt_text + t.nl + text[at:]
        return text[:at] + t.nl + stmt_text + t.nl + text[at:]
    gs = _groups(t.tree.body)
    idx = -1 if not t.has_docstring() else 0
    for i, g in enumerate(gs):
        if _g_any_import(g):
            idx = i
    if idx < 0:
        raise _NeedTree
    at = t.after(gs[idx])
    return text[:at] + t.nl + stmt_text + t.nl + text[at:]


def _transform_text(text: str, fixes: list[Finding]) -> tuple[str, set]:
    """The text engine's :func:`_transform`: same result, no concrete syntax tree.  Raises
    :class:`_NeedTree` for what it cannot place exactly as LibCST does."""
    starts = _line_starts(text)
    placed, ops = set(), []
    cache: dict = {}
    for f in fixes:
        mine = []
        ok = True
        for e in f.fix.edits:
            if e.kind not in _POS_KINDS:
                continue
            key = (e.kind, e.text, e.start, e.end)
            if key not in cache:
                a, b = _offset(starts, text, e.start), _offset(starts, text, e.end)
                cache[key] = _edit_ops(e, text, a, b) if a <= b else None
            got = cache[key]
            if got is None:
                ok = False
                break
            mine.extend(got)
        if ok:
            placed.add(id(f))
            ops.extend(mine)
    # two argument edits on one call are one LibCST node edited twice: not text ranges
    arg_edits = {(e.kind, e.text, e.start, e.end) for f in fixes if id(f) in placed for e in f.fix.edits if e.kind in ("add_arg", "set_args")}
    if len(arg_edits) != len({(s, e) for _k, _t, s, e in arg_edits}):  # two different edits of one call's arguments
        raise _NeedTree
    new = _splice(text, _resolve(ops))
    imports, preludes = _statements(fixes, placed)
    if imports or preludes:
        try:
            t = _Text(new)
        except (SyntaxError, ValueError):
            return new, placed  # reported by the re-parse in apply_fixes
        steps = [(_text_insert_prelude, stmt) for stmt in reversed(preludes)] + [(_text_insert_import, stmt) for stmt in imports]
        for insert, stmt in steps:
            if t.text is not new:  # the last step added a statement: parse the result
                t = _Text(new)
            new = insert(t, stmt)
    return new, placed


def _transform_any(text: str, fixes: list[Finding]) -> tuple[str, set, bool]:
    """(new text, placed fixes, whether LibCST did it)."""
    if ENGINE == "text":
        try:
            new, placed = _transform_text(text, fixes)
            return new, placed, False
        except _NeedTree:
            pass
    new, placed = _transform(text, fixes)
    return new, placed, True


def apply_fixes(src: SourceFile, findings: list[Finding], unsafe: bool = False) -> FixOutcome:
    """Apply the (safe, or also unsafe) fixes of ``findings`` to ``src``.

    Never raises for user code: a LibCST parse failure or a result that does
    not re-parse leaves the text unchanged and sets ``error``.
    """
    chosen, skipped = _select_fixes(findings, unsafe)
    if not chosen:
        return FixOutcome(src.text, [], skipped)
    try:
        new_text, placed, by_cst = _transform_any(src.text, chosen)
        missing = [f for f in chosen if id(f) not in placed]
        if missing:  # drop fixes whose edits did not all land, then redo cleanly
            chosen = [f for f in chosen if id(f) in placed]
            skipped += [(f, "could not locate the code to rewrite") for f in missing]
            new_text, placed, by_cst = _transform_any(src.text, chosen) if chosen else (src.text, set(), False)
    except Exception as exc:  # noqa: BLE001 - a failing rewrite must not stop the run
        return FixOutcome(src.text, [], skipped + [(f, "rewrite failed") for f in chosen], f"cannot rewrite: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    try:
        tree = ast.parse(new_text)
        if by_cst:
            cst.parse_module(new_text)
    except (SyntaxError, ValueError, cst.ParserSyntaxError) as exc:  # pragma: no cover - a bug in a fix
        return FixOutcome(src.text, [], skipped + [(f, "rewrite did not re-parse") for f in chosen], f"rewrite did not re-parse ({exc}); file left unchanged")
    return FixOutcome(new_text, [f for f in chosen if id(f) in placed], skipped, tree=tree)
