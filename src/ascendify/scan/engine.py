"""The scan engine: find files, parse each once with ``ast``, walk it once,
dispatch every node to the checks registered for its type, collect findings.

Files are scanned in parallel (processes) and results cached by content hash,
rule-set version and settings, so re-scanning an unchanged tree is cheap.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import json
import os
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Optional

from ascendify.procutil import worker_pool
from ascendify.config import Settings
from ascendify.rules.project import join
from ascendify.rules.registry import FILE_CHECKS, NODE_CHECKS, Rule, load_checks, load_rules, ruleset_version
from ascendify.scan.context import FileContext
from ascendify.scan.finding import Edit, Finding, Fix
from ascendify.scan.source import MAX_FILE_BYTES, SourceFile, SourceProblem, read_source
from ascendify.semantic import SemanticModel
from ascendify.semantic.noqa import noqa_map as _noqa_map, suppresses
from ascendify.semantic.policy import apply_policy, import_policy, needs_policy
from ascendify.semantic.project import summarize



class RuleContext(FileContext):
    """A :class:`FileContext` plus the reporting API that checks call."""

    def __init__(self, tree: ast.Module, src: SourceFile, rel_path: str, settings: Settings, rules: dict[str, Rule]):
        super().__init__(tree, src.text)
        self.src = src
        self.path = rel_path
        self.settings = settings
        self.rules = rules
        self.findings: list[Finding] = []
        self.current_code = ""
        self._seen: set = set()
        self._model = None
        self.finding_nodes: dict = {}  # id(Finding) -> the node it was reported at
        self.linked_nodes: list = []

    @property
    def model(self):
        """The file's :class:`ascendify.semantic.SemanticModel` (built on first use)."""
        m = self._model
        if m is None:
            m = self._model = SemanticModel(self.tree, self)
        return m

    # ------------------------------------------------------------ positions
    def char_col(self, line: int, byte_col: int) -> int:
        """Convert an ``ast`` UTF-8 byte column on ``line`` (1-based) to a character column."""
        if line < 1 or line > len(self.lines):
            return byte_col
        text = self.lines[line - 1]
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
        """((line, col), (end_line, end_col)) of ``node`` in characters (LibCST convention)."""
        end_line = getattr(node, "end_lineno", None) or node.lineno
        end_col = getattr(node, "end_col_offset", None)
        if end_col is None:
            end_col = node.col_offset
        return (node.lineno, self.char_col(node.lineno, node.col_offset)), (end_line, self.char_col(end_line, end_col))

    def line_ref(self, line: int) -> str:
        """How a message names a line of this file: ``line 14``, or in a notebook ``cell 2, line 3``
        (one coordinate system in every message and format)."""
        if self.src.is_notebook:
            cell, cell_line = self.src.cell_of(line)
            if cell is not None:
                return f"cell {cell}, line {cell_line}"
        return f"line {line}"

    # ------------------------------------------------------------ edits
    def replace(self, node: ast.AST, text: str) -> Edit:
        """Edit replacing expression ``node`` with the code ``text`` (its string literals re-quoted
        when ``node`` sits in an f-string's replacement field that uses their quote)."""
        start, end = self.span(node)
        return Edit("replace", self.requote(node, text), start, end)

    def requote(self, node: ast.AST, text: str) -> str:
        """``text`` fit to replace ``node``: inside ``f"..{node}.."`` a ``"cpu"`` in it becomes
        ``'cpu'`` — before Python 3.12 an f-string's expression cannot use the f-string's own quote
        (PEP 701 lifted that), and the rewrite would not parse there."""
        if '"' not in text and "'" not in text:
            return text
        quote = self._fstring_quote(node)
        return requote_strings(text, quote) if quote else text

    def _fstring_quote(self, node: ast.AST) -> Optional[str]:
        p = getattr(node, "_asc_parent", None)
        while p is not None and not isinstance(p, ast.stmt):
            if p.__class__ is ast.JoinedStr:
                line = self.lines[p.lineno - 1] if 0 < p.lineno <= len(self.lines) else ""
                head = line.encode("utf-8")[p.col_offset:].decode("utf-8", "replace").lstrip("rRfFbBuU")
                if head[:3] in ('"""', "'''"):
                    return None  # a triple-quoted f-string may hold the single quote character
                return head[:1] if head[:1] in ('"', "'") else None
            p = getattr(p, "_asc_parent", None)
        return None

    def rename_attr(self, node: ast.Attribute, new_attr: str) -> Edit:
        """Edit renaming the attribute of ``node`` (``x.cuda`` → ``x.npu``), keeping ``x`` as written."""
        start, end = self.span(node)
        return Edit("attr", new_attr, start, end)

    def replace_string(self, node: ast.Constant, new_value: str) -> Edit:
        """Edit replacing a string literal's value, keeping its quote style and prefix."""
        start, end = self.span(node)
        return Edit("string", new_value, start, end)

    def add_keyword(self, call: ast.Call, text: str) -> Edit:
        """Edit appending the keyword argument ``text`` (e.g. ``map_location="cpu"``) to ``call``."""
        start, end = self.span(call)
        return Edit("add_arg", self.requote(call, text), start, end)

    def set_args(self, call: ast.Call, text: str) -> Edit:
        """Edit replacing all arguments of ``call`` by ``text`` (e.g. ``DEVICE_TYPE, non_blocking=True``)."""
        start, end = self.span(call)
        return Edit("set_args", self.requote(call, text), start, end)

    def args_text(self, call: ast.Call) -> list[str]:
        """Source text of each argument of ``call`` (positional, then keywords as written)."""
        out = [self.segment(a) for a in call.args]
        for k in call.keywords:
            out.append(f"{k.arg}={self.segment(k.value)}" if k.arg else f"**{self.segment(k.value)}")
        return out

    @staticmethod
    def add_import(stmt: str = "import torch_npu") -> Edit:
        """Edit ensuring ``stmt`` is imported after the file's torch imports."""
        return Edit("add_import", stmt)

    @staticmethod
    def add_prelude(stmt: str) -> Edit:
        """Edit ensuring the statement ``stmt`` exists right after the imports."""
        return Edit("add_prelude", stmt)

    # ------------------------------------------------------------ reporting
    def report(
        self,
        node: Optional[ast.AST],
        fix: Optional[Fix] = None,
        *,
        code: Optional[str] = None,
        severity: Optional[str] = None,
        message: Optional[str] = None,
        **fmt: object,
    ) -> None:
        """Record a finding of the current rule at ``node``.

        The message is the rule's ``message`` template formatted with ``fmt``
        unless ``message`` is given.  A second report of the same rule at the
        same place is dropped.
        """
        code = code or self.current_code
        rule = self.rules[code]
        if node is None:
            (line, col), (end_line, end_col) = (1, 0), (1, 0)
        else:
            (line, col), (end_line, end_col) = self.token_span(node)
        key = (code, line, col)
        if key in self._seen:
            return
        self._seen.add(key)
        text = message if message is not None else rule.message_for(self.settings.target).format(**fmt)
        f = Finding(code, text, self.path, line, col, end_line, end_col, severity or rule.severity, rule.category, fix)
        self.findings.append(f)
        if node is not None:
            self.finding_nodes[id(f)] = node

    def token_span(self, node: ast.AST) -> tuple:
        """Where a finding at ``node`` is reported: the token that must change (the attribute of
        ``x.cuda()`` / ``torch.cuda.synchronize``, a keyword's name, a literal) as start, the end of
        the whole expression as end — so a call spanning lines is reported on the line of ``.cuda``."""
        (line, col), end = self.span(node)
        tok = node.func if node.__class__ is ast.Call and node.func.__class__ is ast.Attribute else node
        if tok.__class__ is ast.Attribute:
            tl = getattr(tok, "end_lineno", None)
            tc = getattr(tok, "end_col_offset", None)
            if tl is not None and tc is not None:
                return (tl, self.char_col(tl, tc) - len(tok.attr)), end
        return (line, col), end


PROJECT_CODES = ("DEV026", "DST001", "DEV006", "EXT019")
"""Rules the project pass reports (across files)."""
WORK_PREFIXES = ("DEV", "AMP", "DST", "MEM", "EXT", "IMP")
"""The rules whose findings are a helper's CUDA/NCCL work in a module summary."""


def analysis_codes(settings: Settings, rules: dict) -> frozenset:
    """The rules whose checks run: the enabled ones, and — when a project-pass rule is on — every
    rule the project pass builds on (a call site's DEV026 comes from the helper's own findings), so
    ``--select DEV026`` alone finds what a full scan finds.  Findings of rules that are not enabled
    are dropped at output (:func:`_analyze`)."""
    on = {c for c in rules if settings.enabled(c)}
    if any(c in on for c in PROJECT_CODES):
        on |= {c for c in rules if c.startswith(WORK_PREFIXES)}
    return frozenset(on)


def requote_strings(text: str, quote: str) -> str:
    """``text`` with each single-line string literal quoted by ``quote`` requoted with the other
    quote character, where its body does not contain that one (``"cpu"`` → ``'cpu'`` for ``"``)."""
    import io
    import tokenize

    other = "'" if quote == '"' else '"'
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return text
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))
    out, last = [], 0
    for t in toks:
        if t.type != tokenize.STRING:
            continue
        s = t.string
        body_at = len(s) - len(s.lstrip("rRbBuUfF"))
        if s[body_at:body_at + 3] in ('"""', "'''") or s[body_at:body_at + 1] != quote:
            continue
        body = s[body_at + 1:-1]
        if other in body or "\\" in body:
            continue
        a = starts[t.start[0] - 1] + t.start[1]
        b = starts[t.end[0] - 1] + t.end[1]
        out.append(text[last:a])
        out.append(s[:body_at] + other + body + other)
        last = b
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


@dataclass
class Dispatch:
    """Node type → checks, for the enabled rules of one settings object.

    ``by_type`` holds checks called for every node of a type; ``by_key`` those
    registered with ``names=``, called only for nodes with one of those keys.
    """

    by_type: dict
    file_checks: list
    rules: dict
    by_key: dict = field(default_factory=dict)

    @classmethod
    def build(cls, settings: Settings) -> "Dispatch":
        load_checks()
        rules = load_rules()
        by_type: dict[type, list] = {}
        by_key: dict[type, dict[str, list]] = {}
        file_checks = []
        on = analysis_codes(settings, rules)
        for code, entries in NODE_CHECKS.items():
            if code in on:
                for types, fn, names in entries:
                    if callable(names):  # keys chosen by the settings (a release's or chip's table)
                        names = frozenset(names(settings))
                    for t in types:
                        if names is None:
                            by_type.setdefault(t, []).append((code, fn))
                        else:
                            for n in names:
                                by_key.setdefault(t, {}).setdefault(n, []).append((code, fn))
        for code, fns in FILE_CHECKS.items():
            if code in on:
                file_checks.extend((code, fn) for fn in fns)
        return cls(by_type, file_checks, rules, by_key)


_AST = ast.AST
_NON_NODE_FIELDS = frozenset(("id", "ctx", "attr", "name", "asname", "arg", "module", "level", "kind", "names", "op",
                              "type_comment", "conversion", "is_async"))
_CHILD_FIELDS: dict = {ast.Constant: ()}


def _node_key(node: ast.AST, cls: type) -> Optional[str]:
    if cls is ast.Call:
        f = node.func  # type: ignore[attr-defined]
        fc = f.__class__
        return f.attr if fc is ast.Attribute else f.id if fc is ast.Name else None
    if cls is ast.Attribute:
        return node.attr  # type: ignore[attr-defined]
    if cls is ast.Name:
        return node.id  # type: ignore[attr-defined]
    return node.arg  # type: ignore[attr-defined]  # ast.keyword


def _walk(tree: ast.AST, by_type: dict, ctx: "RuleContext", by_key: Optional[dict] = None) -> None:
    """Visit every node once, setting ``_asc_parent`` on each and calling the checks
    registered for its type (and, for keyed checks, its key).  Expression-context and
    operator singletons are skipped."""
    stack: list = [tree]
    pop, push = stack.pop, stack.append
    fields_of = _CHILD_FIELDS
    by_key = by_key or {}
    linked = ctx.linked_nodes.append  # every node given a parent link: unlinked after the file (release_tree)
    calls = ctx.all_calls = []  # every Call, for the semantic model (call sites, uses): no second walk
    ctx.walk_done = False  # all_calls is complete only at the end (SemanticModel.calls_of reads it then)
    add_call = calls.append
    compares: list = []  # every Compare, for the model's implementation selectors (the policy step, after the walk)
    add_compare = compares.append
    Call, Name, Attribute, Compare = ast.Call, ast.Name, ast.Attribute, ast.Compare
    aliases = ctx.aliases
    while stack:
        node = pop()
        cls = node.__class__
        if cls is Call:
            add_call(node)
        elif cls is Compare:
            add_compare(node)
        fields = fields_of.get(cls)
        if fields is None:
            fields = fields_of[cls] = tuple(f for f in cls._fields if f not in _NON_NODE_FIELDS)
        for name in fields:
            value = getattr(node, name, None)
            if value is None:
                continue
            if value.__class__ is list:
                for child in value:
                    if isinstance(child, _AST):
                        child._asc_parent = node
                        push(child)
                        linked(child)
            elif isinstance(value, _AST):
                value._asc_parent = node
                push(value)
                linked(value)
        fns = by_type.get(cls)
        if fns:
            for code, fn in fns:
                ctx.current_code = code
                fn(node, ctx)
        keyed = by_key.get(cls)
        if keyed:
            if cls is Name:  # _node_key, inlined: this runs for every Name, Attribute and Call
                key = node.id
            elif cls is Attribute:
                key = node.attr
            elif cls is Call:
                f = node.func
                fc = f.__class__
                key = f.attr if fc is Attribute else f.id if fc is Name else None
            else:
                key = _node_key(node, cls)
            fns = keyed.get(key)
            if fns:
                for code, fn in fns:
                    ctx.current_code = code
                    fn(node, ctx)
            if cls is Name or cls is Call and node.func.__class__ is Name:  # an imported name: also by what it imports
                full = aliases.get(key)
                if full is not None:
                    alias_key = full.rpartition(".")[2]
                    if alias_key != key:
                        fns = keyed.get(alias_key)
                        if fns:
                            for code, fn in fns:
                                ctx.current_code = code
                                fn(node, ctx)
                    # and by what it imports where it is used (scope-aware, as ``ctx.qualname`` answers
                    # the checks), where an import of the same name elsewhere in the file differs
                    q = ctx.qualname(node if cls is Name else node.func)
                    if q is not None:
                        q_key = q.rpartition(".")[2]
                        if q_key != key and q_key != alias_key:
                            fns = keyed.get(q_key)
                            if fns:
                                for code, fn in fns:
                                    ctx.current_code = code
                                    fn(node, ctx)
    ctx.all_compares = compares  # complete only now: read after the walk (semantic.policy)
    ctx.walk_done = True


def _problem_finding(problem: SourceProblem, rel_path: str, rules: dict) -> Finding:
    rule = rules[problem.code]
    return Finding(problem.code, problem.message, rel_path, problem.line, problem.col, problem.line, problem.col, rule.severity, rule.category)


_NEWER_SYNTAX = {
    "Match": ((3, 10), "a `match` statement"),
    "TryStar": ((3, 11), "`except*`"),
    "TypeAlias": ((3, 12), "a `type` statement"),
    "TypeParameters": ((3, 12), "type parameters (PEP 695)"),
}
"""LibCST node name → (first Python with that syntax, what it is)."""


def _newer_syntax_hint(text: str) -> str:
    """Why ``ast`` on this interpreter rejects a file that newer Python accepts ('' if it does not).

    LibCST's parser reads Python 3.0–3.12+ grammar whatever Python runs it, so
    a file it parses but ``ast.parse`` here rejects uses syntax newer than this
    interpreter (e.g. ``match`` under Python 3.9).  Never raises.
    """
    try:
        import libcst as cst

        module = cst.parse_module(text)
    except Exception:  # noqa: BLE001 - not valid Python for LibCST either
        return ""
    here = sys.version_info[:2]
    found: list = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            hit = _NEWER_SYNTAX.get(type(node).__name__)
            if hit and hit[0] > here:
                found.append(hit)
            return not found

    try:
        module.visit(_Find())
    except Exception:  # noqa: BLE001 - RecursionError on absurd nesting
        return ""
    running = f"ascendify runs on Python {here[0]}.{here[1]} here; run it with the project's Python to scan this file"
    if found:
        (major, minor), what = min(found)
        return f" — {what} needs Python {major}.{minor}+, and {running}"
    if here < (3, 12):
        return f" — the file may need a newer Python: {running}"
    return ""


def analyze_source(src: SourceFile, rel_path: str, settings: Settings, dispatch: Optional[Dispatch] = None,
                   summary_out: Optional[list] = None, tree: Optional[ast.Module] = None) -> list[Finding]:
    """All findings for one decoded source.  Syntax errors become a SYN001 finding.

    Notebook findings get ``cell`` and ``cell_line`` set.  With ``summary_out``, the module's
    summary for the project checks (:func:`ascendify.semantic.project.summarize`) is appended to it.
    ``tree``: ``ast.parse(src.text)`` when the caller has it already (fix checks that its result
    parses); it is consumed (the walk links it to its parents).
    """
    if dispatch is None:
        dispatch = Dispatch.build(settings)
    # The parent links make every tree a web of reference cycles that only the cyclic GC can free,
    # and its collections during the parse and walk of the next files were a third of the scan time.
    # So: no automatic collections while a file is parsed and analysed, and the links (and the
    # model's back references) are removed when it is done, so reference counting frees the tree.
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        return _parse_and_analyze(src, rel_path, settings, dispatch, summary_out, tree)
    finally:
        if gc_was_on:
            gc.enable()


def _parse_and_analyze(src: SourceFile, rel_path: str, settings: Settings, dispatch: Dispatch,
                       summary_out: Optional[list], tree: Optional[ast.Module] = None) -> list[Finding]:
    try:
        if tree is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SyntaxWarning for invalid escapes in user code
                tree = ast.parse(src.text, filename=rel_path, type_comments=False)
    except SyntaxError as exc:
        line = exc.lineno or 1
        if src.is_notebook:
            cell, cell_line = src.cell_of(line)
            where = f" (cell {cell}, line {cell_line})" if cell else ""
        else:
            where = ""
        hint = _syntax_hint(exc.text or "", str(exc.msg), src.text)
        f = Finding("SYN001", f"syntax error: {exc.msg}{where}{hint}", rel_path, line, max((exc.offset or 1) - 1, 0), line, max((exc.offset or 1) - 1, 0), "error", "parse")
        if src.is_notebook:
            f.cell, f.cell_line = src.cell_of(line)
        return [f] if settings.enabled("SYN001", rel_path) else []
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        f = Finding("SYN001", f"cannot parse: {exc}", rel_path, 1, 0, 1, 0, "error", "parse")
        return [f] if settings.enabled("SYN001", rel_path) else []

    ctx = RuleContext(tree, src, rel_path, settings, dispatch.rules)
    try:
        out = _analyze(ctx, tree, src, rel_path, settings, dispatch, summary_out)
    finally:
        release_tree(ctx)
    if src.cell_problems and settings.enabled("SYN001", rel_path):
        out = sorted(out + _cell_syntax_findings(src, rel_path), key=Finding.sort_key)
    return out


def _syntax_hint(bad_line: str, message: str, text: str) -> str:
    """What to do about a syntax error in ``text`` ('' when nothing better than the message):
    Python 2 code, or syntax newer than this interpreter."""
    if "print" in bad_line and "Missing parentheses" in message:
        return " — Python 2 code? port it to Python 3 first"
    return _newer_syntax_hint(text) if sys.version_info < (3, 13) else ""


def _cell_syntax_findings(src: SourceFile, rel_path: str) -> list[Finding]:
    """One SYN001 finding per notebook code cell that does not parse on its own (the cell is
    comment lines in the module that was analysed, so the other cells' findings stand)."""
    out = []
    for p in src.cell_problems:
        hint = _syntax_hint(p.bad_line, p.message, p.text) if p.message.startswith("syntax error") else ""
        line = src.line_of(p.index, p.line)
        f = Finding("SYN001", f"{p.message} (cell {p.cell}, line {p.line}){hint}", rel_path, line, p.col, line, p.col, "error", "parse")
        f.cell, f.cell_line = p.cell, p.line
        out.append(f)
    return out


def release_tree(ctx: "RuleContext") -> None:
    """Remove the parent links the walk set (and the model), breaking the tree's reference cycles."""
    for n in ctx.linked_nodes:
        try:
            del n._asc_parent
        except AttributeError:
            pass
    ctx.linked_nodes = []
    ctx.finding_nodes = {}
    if ctx._model is not None:
        ctx._model.release()
    if ctx.bindings is not None:
        ctx.bindings.release()
    ctx._model = None
    ctx.bindings = None
    ctx._states = {}
    ctx.all_calls = []
    ctx.all_compares = None
    ctx.walk_done = False


def _analyze(ctx, tree, src, rel_path, settings, dispatch, summary_out) -> list:
    _walk(tree, dispatch.by_type, ctx, dispatch.by_key)
    for code, fn in dispatch.file_checks:
        ctx.current_code = code
        fn(ctx)
    if ctx.findings:
        if needs_policy(ctx.findings, ctx.rules):
            ctx.findings = apply_policy(ctx.findings, ctx)
        if settings.target == "npu":
            import_policy(ctx.findings, ctx)
    # noqa once, after every pass that makes this file's findings (checks, policy); the summary is made
    # from what it keeps, so a suppressed helper line is no CUDA work at its callers either
    noqa = _noqa_map(ctx.lines)
    if noqa:
        ctx.findings = [f for f in ctx.findings if not (f.line in noqa and suppresses(noqa[f.line], f.code))]
    if summary_out is not None and not src.is_notebook:
        try:
            summary_out.append(summarize(ctx, ctx.findings))
        except RecursionError:  # absurd nesting: no summary, the file's own findings stand
            pass

    out = []
    for f in ctx.findings:
        if not settings.enabled(f.code, rel_path):  # the rules that run only for the project pass: not shown
            continue
        if src.is_notebook:
            f.cell, f.cell_line = src.cell_of(f.line)
            f.json_line = src.json_line(f.line)
            if f.notes:
                f.notes_in_cells(src.cell_of)
            if f.related:
                f.related_in_cells(src.cell_of, src.json_line)
        out.append(f)
    out.sort(key=Finding.sort_key)
    return out


# ---------------------------------------------------------------------- files
@dataclass
class FileEntry:
    path: str  # as opened
    rel: str  # as displayed


def kind_suffixes(settings: Settings) -> tuple:
    """Suffixes of non-Python files that an enabled file-kind rule reports (e.g. ``.cu``)."""
    return tuple(sorted({suf for r in load_rules().values() if r.file_suffixes and settings.enabled(r.code) for suf in r.file_suffixes}))


EXPLICIT_PYTHON = (".py", ".pyi", ".pyw", ".ipynb")


def _python_shebang(path: str) -> bool:
    """An extensionless script whose first line is a python shebang (``#!/usr/bin/env python3``)."""
    if os.path.splitext(path)[1]:
        return False
    try:
        with open(path, "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def _skip_note(path: str, message: str) -> None:
    import sys

    sys.stderr.write(f"ascendify: {path}: {message}\n")


def discover(paths: Iterable[str], settings: Settings, on_problem: Callable[[str, str], None],
             on_skip: Callable[[str, str], None] = _skip_note) -> list[FileEntry]:
    """Expand files and folders to ``.py``/``.ipynb`` files (and files that a
    file-kind rule such as EXT011 reports, e.g. ``.cu``), honouring excludes.

    A file named explicitly is scanned when it is ``.py``/``.pyi``/``.pyw``/``.ipynb``,
    a file-kind suffix, or an extensionless script with a python shebang; any other
    (``p.svg``) is not parsed as Python: ``on_skip(path, message)`` is told (default: one
    line on stderr) and it counts as no file, not as a problem.  Inside folders other
    files are left out silently.

    Symlinks are resolved so that every file is scanned once, at its real path:
    a link (to a folder or a file) that points inside the folder being scanned
    is not followed, since its target is scanned where it is; a link to a folder
    that contains it is reported once as a symlink loop.  Links to folders outside
    are followed once (real paths remembered).  ``on_problem(path, message)`` is
    told about missing paths, loops, broken links and unlistable folders.
    """
    from ascendify.fsutil import display_path, is_within

    seen_real: set[str] = set()
    out: list[FileEntry] = []
    cwd = os.getcwd()
    wanted = (".py", ".ipynb") + kind_suffixes(settings)

    for given in paths:
        if not os.path.lexists(given):
            on_problem(given, "no such file or folder")
            continue
        if os.path.isfile(given):
            if not (given.lower().endswith(wanted + EXPLICIT_PYTHON) or _python_shebang(given)):
                on_skip(given, "not a Python file or notebook; skipped")
                continue
            real = os.path.realpath(given)
            if real not in seen_real:
                seen_real.add(real)
                out.append(FileEntry(given, display_path(given, cwd)))
            continue
        if not os.path.isdir(given):
            on_problem(given, "not a file or folder (broken symlink?)")
            continue
        root_real = os.path.realpath(given)
        dirs_seen = {root_real}
        for dirpath, dirnames, filenames in os.walk(given, followlinks=True, onerror=lambda e: on_problem(e.filename or given, f"cannot list folder: {e.strerror}")):
            keep = []
            for d in sorted(dirnames):
                full = os.path.join(dirpath, d)
                if settings.is_excluded(os.path.relpath(full, given)) or settings.is_excluded(d):
                    continue
                real = os.path.realpath(full)
                if os.path.islink(full) and is_within(real, root_real):
                    if is_within(os.path.realpath(dirpath), real):
                        on_problem(full, "symlink loop (the link points to a folder that contains it); not followed")
                    continue  # the target folder is scanned at its own path
                if real in dirs_seen:
                    on_problem(full, "symlink loop (folder already scanned); skipped")
                    continue
                dirs_seen.add(real)
                keep.append(d)
            dirnames[:] = keep
            for fn in sorted(filenames):
                if not fn.endswith(wanted):
                    continue
                full = os.path.join(dirpath, fn)
                if settings.is_excluded(os.path.relpath(full, given)):
                    continue
                if os.path.islink(full) and not os.path.exists(full):
                    on_problem(full, "broken symlink; skipped")
                    continue
                real = os.path.realpath(full)
                if real in seen_real:
                    continue
                if os.path.islink(full) and is_within(real, root_real):
                    # a link to a file of this folder: scan (and fix) the file at its real path
                    full = os.path.join(given, os.path.relpath(real, root_real))
                    if settings.is_excluded(os.path.relpath(full, given)):
                        continue
                seen_real.add(real)
                out.append(FileEntry(full, display_path(full, cwd)))
    return out


# ---------------------------------------------------------------------- cache
def default_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ascendify")


class Cache:
    """Findings by (content hash, path, rule-set version, settings) in one JSON file per source."""

    def __init__(self, directory: Optional[str], settings: Settings):
        self.dir = os.path.join(directory, ruleset_version()) if directory else None
        # ``ast`` differs between Pythons (``match`` is a syntax error on 3.9): one cache per minor version
        self.salt = settings.cache_key() + "-py%d.%d" % sys.version_info[:2]
        self._dir_seen: Optional[bool] = None

    def _exists(self) -> bool:
        if self._dir_seen is None:
            self._dir_seen = bool(self.dir) and os.path.isdir(self.dir)
        return self._dir_seen

    def key(self, data: bytes, rel: str, path: str) -> str:
        """The file's content and path, and the exact pins of its project's dependency files: the library
        summaries EXT017 reads are chosen by those pins, so a changed pin is a changed input."""
        from ascendify.libsum import project_pins  # cached per folder

        h = hashlib.sha256(self.salt.encode())
        h.update(rel.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
        h.update(repr(sorted(project_pins(path).items())).encode("utf-8"))
        h.update(b"\0")
        h.update(data)
        return h.hexdigest()

    def get(self, key: str) -> Optional[tuple[list[Finding], int, Optional[dict]]]:
        """(findings, line count, module summary) stored for ``key``, or None."""
        if not self.dir:
            return None
        try:
            with open(os.path.join(self.dir, key[:2], key + ".json"), encoding="utf-8") as fh:
                doc = json.load(fh)
            return [Finding.from_dict(d) for d in doc["findings"]], int(doc["lines"]), doc.get("summary")
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def put(self, key: str, findings: list[Finding], lines: int, summary: Optional[dict] = None) -> None:
        if not self.dir:
            return
        d = os.path.join(self.dir, key[:2])
        try:
            os.makedirs(d, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"lines": lines, "findings": [f.to_dict() for f in findings], "summary": summary}, fh)
            os.replace(tmp, os.path.join(d, key + ".json"))
        except OSError:
            pass  # a cache that cannot be written is not an error

    def lookup(self, entry: "FileEntry") -> Optional[tuple[list[Finding], int, Optional[dict]]]:
        """The cached result for a file, read and hashed here (no parsing), or None.

        With no cache folder for this rule-set version yet (a first scan), nothing
        can hit, so files are not read twice."""
        if not self.dir or not entry.path.endswith((".py", ".ipynb")) or not self._exists():
            return None
        try:
            if os.path.getsize(entry.path) > MAX_FILE_BYTES:
                return None
            with open(entry.path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        return self.get(self.key(data, entry.rel, entry.path))


# ---------------------------------------------------------------------- scanning
@dataclass
class ScanResult:
    findings: list = field(default_factory=list)
    files: list = field(default_factory=list)  # rel paths scanned
    lines: dict = field(default_factory=dict)  # rel path -> line count
    problems: list = field(default_factory=list)  # (path, message) outside any file
    cached: int = 0
    summaries: dict = field(default_factory=dict)  # rel path -> module summary (project pass)
    joined: list = field(default_factory=list)  # the project pass's findings (also in ``findings``)


_worker_state: dict = {}


def _init_worker(settings: Settings, cache_dir: Optional[str]) -> None:
    _worker_state["settings"] = settings
    _worker_state["dispatch"] = Dispatch.build(settings)
    _worker_state["cache"] = Cache(cache_dir, settings)


def _kind_rule(path: str, rules: dict) -> Optional[Rule]:
    if path.endswith((".py", ".ipynb")):
        return None
    for r in rules.values():
        if r.file_suffixes and path.endswith(r.file_suffixes):
            return r
    return None


def _scan_one(entry: FileEntry) -> tuple[str, list[Finding], int, bool, Optional[dict]]:
    settings: Settings = _worker_state["settings"]
    cache: Cache = _worker_state["cache"]
    dispatch: Dispatch = _worker_state["dispatch"]
    kind = _kind_rule(entry.path, dispatch.rules)
    if kind is not None:
        if not settings.enabled(kind.code, entry.rel):
            return entry.rel, [], 0, False, None
        return entry.rel, [Finding(kind.code, kind.message, entry.rel, 1, 0, 1, 0, kind.severity, kind.category)], 0, False, None
    src = read_source(entry.path)
    if isinstance(src, SourceProblem):
        if not settings.enabled(src.code, entry.rel):
            return entry.rel, [], 0, False, None
        return entry.rel, [_problem_finding(src, entry.rel, dispatch.rules)], 0, False, None
    nlines = src.text.count("\n") + 1
    key = cache.key(src.raw, entry.rel, entry.path)
    hit = cache.get(key)
    if hit is not None:
        return entry.rel, hit[0], hit[1], True, hit[2]
    summary: list = []
    findings = analyze_source(src, entry.rel, settings, dispatch, summary)
    summ = summary[0] if summary else None
    cache.put(key, findings, nlines, summ)
    return entry.rel, findings, nlines, False, summ


def scan_files(
    entries: list[FileEntry],
    settings: Settings,
    cache_dir: Optional[str] = None,
    jobs: Optional[int] = None,
    progress: Optional[Callable[[int], None]] = None,
) -> ScanResult:
    """Scan ``entries``; ``jobs`` processes (default: CPU count; 1 = in-process)."""
    result = ScanResult()
    jobs = jobs or os.cpu_count() or 1
    # cache hits are answered here, so an unchanged tree starts no worker processes
    cache = Cache(cache_dir, settings)
    pending = []
    for entry in entries:
        hit = cache.lookup(entry)
        if hit is None:
            pending.append(entry)
        else:
            _collect([(entry.rel, hit[0], hit[1], True, hit[2])], result, progress)
    if jobs > 1 and len(pending) >= 16:
        chunk = max(1, len(pending) // (jobs * 8))
        with worker_pool(jobs, _init_worker, (settings, cache_dir), _mp_context()) as ex:  # Ctrl-C: procutil
            outputs: Iterator = ex.map(_scan_one, pending, chunksize=chunk)
            _collect(outputs, result, progress)
    elif pending:
        _init_worker(settings, cache_dir)
        _collect(map(_scan_one, pending), result, progress)
    result.findings, result.joined = project_pass(result.findings, result.summaries, settings)
    return result


def project_pass(findings: list, summaries: dict, settings: Settings) -> tuple:
    """(all findings, the cross-file ones) after the project pass over the files' ``findings`` and
    ``summaries``: the same for a scan and for the final state of a fix run."""
    joined = join(summaries, settings, load_rules(), findings) if len(summaries) > 1 else []
    from ascendify.rules.checks.dtype import bf16_project_note  # one DTY005 note per project without a bf16-less chip

    out = bf16_project_note(findings + joined, settings)
    out.sort(key=Finding.sort_key)
    return out, joined


def _mp_context():
    """``fork`` is the fastest start method, but from Python 3.12 forking a
    multi-threaded process is deprecated (and 3.14 defaults to forkserver):
    use forkserver there, where the platform has it."""
    import multiprocessing

    if sys.version_info >= (3, 12) and "forkserver" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("forkserver")
    return None


def _collect(outputs: Iterable, result: ScanResult, progress: Optional[Callable[[int], None]]) -> None:
    for rel, findings, nlines, cached, summary in outputs:
        result.files.append(rel)
        result.lines[rel] = nlines
        result.findings.extend(findings)
        result.cached += cached
        if summary:
            result.summaries[rel] = summary
        if progress:
            progress(1)
