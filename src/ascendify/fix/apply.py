"""Apply findings' fixes to one source with LibCST, keeping everything else as written.

Edits locate their target by position: the LibCST expression node whose
range equals the range the ``ast`` check saw.  The result is re-parsed (by
``ast`` and LibCST) before it is returned; a fix whose edits could not all be
placed is dropped, never half-applied.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ascendify.scan.finding import Edit, Finding
from ascendify.scan.source import SourceFile

_POS_KINDS = ("replace", "attr", "add_arg", "set_args", "string")


@dataclass
class FixOutcome:
    """Result of fixing one file.

    ``text`` is the new source (equal to the old when nothing applied);
    ``applied`` the findings whose fix went in; ``skipped`` (finding, reason)
    pairs; ``error`` a one-line reason when the file was left untouched.
    """

    text: str
    applied: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    error: Optional[str] = None

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
            quote, body = node.quote, edit.text
            if "r" not in node.prefix.lower():
                body = body.replace("\\", "\\\\")
            elif "\\" in body or quote[0] in body:
                return None
            body = body.replace(quote[0], "\\" + quote[0]) if len(quote) == 1 else body
            if len(quote) == 1 and "\n" in body:
                body = body.replace("\n", "\\n")
            return node.with_changes(value=f"{node.prefix}{quote}{body}{quote}")
        if edit.kind == "replace":
            new = cst.parse_expression(edit.text)
            if getattr(node, "lpar", None) and hasattr(new, "lpar"):
                new = new.with_changes(lpar=node.lpar, rpar=node.rpar)
            return new
        return None


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
    if found is not None and found[0]:
        path, stmts, i = found
        stmts = list(stmts)
        j = i
        for k in range(i, len(stmts)):
            if _is_any_import(stmts[k]):
                j = k
            else:
                break
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
    imports, preludes = [], []
    for f in fixes:
        ok = all((e.kind, e.text, e.start, e.end) in placed_edits for e in f.fix.edits if e.kind in _POS_KINDS)
        if ok:
            placed.add(id(f))
            for e in f.fix.edits:
                if e.kind == "add_import" and e.text not in imports:
                    imports.append(e.text)
                elif e.kind == "add_prelude" and e.text not in preludes:
                    preludes.append(e.text)
    for stmt in reversed(preludes):
        new_module = _insert_prelude(new_module, stmt)
    for stmt in imports:
        new_module = _insert_import(new_module, stmt)
    return new_module.code, placed


def apply_fixes(src: SourceFile, findings: list[Finding], unsafe: bool = False) -> FixOutcome:
    """Apply the (safe, or also unsafe) fixes of ``findings`` to ``src``.

    Never raises for user code: a LibCST parse failure or a result that does
    not re-parse leaves the text unchanged and sets ``error``.
    """
    chosen, skipped = _select_fixes(findings, unsafe)
    if not chosen:
        return FixOutcome(src.text, [], skipped)
    try:
        new_text, placed = _transform(src.text, chosen)
        missing = [f for f in chosen if id(f) not in placed]
        if missing:  # drop fixes whose edits did not all land, then redo cleanly
            chosen = [f for f in chosen if id(f) in placed]
            skipped += [(f, "could not locate the code to rewrite") for f in missing]
            new_text, placed = _transform(src.text, chosen) if chosen else (src.text, set())
    except Exception as exc:  # noqa: BLE001 - a failing rewrite must not stop the run
        return FixOutcome(src.text, [], skipped + [(f, "rewrite failed") for f in chosen], f"cannot rewrite: {str(exc).splitlines()[0]}")
    try:
        ast.parse(new_text)
        cst.parse_module(new_text)
    except (SyntaxError, ValueError, cst.ParserSyntaxError) as exc:  # pragma: no cover - a bug in a fix
        return FixOutcome(src.text, [], skipped + [(f, "rewrite did not re-parse") for f in chosen], f"rewrite did not re-parse ({exc}); file left unchanged")
    return FixOutcome(new_text, [f for f in chosen if id(f) in placed], skipped)
