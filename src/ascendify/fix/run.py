"""Fix a whole scan result: diff, in-place write, or a migrated copy of the tree."""

from __future__ import annotations

import csv
import difflib
import io
import os
import re
import shutil
import stat
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from ascendify.procutil import worker_pool
from ascendify.config import Settings
from ascendify.errors import AscendifyError
from ascendify.fix.apply import apply_fixes
from ascendify.fsutil import atomic_write, display_path, is_within
from ascendify.output.escape import json_text, text_safe
from ascendify.scan.engine import ScanResult, analyze_source
from ascendify.diagnostics import Finding
from ascendify.scan.source import CELL_MARKER, SourceFile, SourceProblem, encode_source, final_eol, read_source

MAX_PASSES = 5
CHANGELOG_FIELDS = ("file", "cell", "start_line", "end_line", "code", "operation", "message", "safe", "source_line", "migrated_line")
"""Change-log columns.  ``start_line``/``end_line`` and ``source_line`` are lines of the
original file, ``migrated_line`` the line of the same code in the fixed file (empty when a fix
removed it); ``cell`` is the notebook code-cell number (empty for .py files), and the lines
are then lines of that cell.  See docs/output.md."""

SKIP_DIRS = (".git", "__pycache__", ".ascendify_cache")
"""Folders never copied into a migrated copy."""


@dataclass
class FixRun:
    """What a fix run did: the change log, unfixed findings, unified diff, errors."""

    changes: list = field(default_factory=list)  # dicts with CHANGELOG_FIELDS
    applied: list = field(default_factory=list)  # findings whose fix went in (original positions)
    texts: dict = field(default_factory=dict)  # rel path -> (old text, new text) of changed files
    remaining: list = field(default_factory=list)  # findings left for a person
    unsafe_skipped: int = 0
    diff: str = ""
    files_changed: list = field(default_factory=list)
    errors: list = field(default_factory=list)  # (path, message): files left unchanged
    problems: list = field(default_factory=list)  # (path, message): files missing from the --output copy
    unwritten: list = field(default_factory=list)  # (rel, OS reason, fixes) of each file --write could not write
    lines: dict = field(default_factory=dict)  # id(remaining finding) -> (source_line, migrated_line)
    counts: dict = field(default_factory=dict)  # output.summary.fix_counts of the scan the run started from
    fixed_ids: set = field(default_factory=set)  # id() of the scan's findings the run fixed (output.summary.fixed_by_run)

    def stats(self) -> dict:
        return {"applied": len(self.changes), "files_changed": len(self.files_changed),
                "remaining": len(self.remaining), "unsafe_skipped": self.unsafe_skipped,
                "fixed": self.counts.get("fixed", len(self.changes)),
                "not_written": sum(n for _, _, n in self.unwritten), "files_not_written": len(self.unwritten)}

    def remaining_entry(self, f: Finding) -> dict:
        """A remaining finding as in the JSON change log: ``Finding.to_dict()`` plus
        ``source_line`` and ``migrated_line`` (lines of the cell for notebooks)."""
        d = f.to_dict()
        here = f.cell_line or f.line
        d["source_line"], d["migrated_line"] = self.lines.get(id(f), (here, here))
        return d

    def write_changelog(self, csv_path: str) -> None:
        """Write the change log as CSV at ``csv_path`` and JSON beside it (``.json``),
        each atomically.  File-name bytes that are not UTF-8 are ``\\xNN`` in the CSV and
        ``\\udcNN`` escapes in the JSON; both files are valid UTF-8."""
        base, _ = os.path.splitext(csv_path)
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=CHANGELOG_FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows({k: text_safe(v) if isinstance(v, str) else v for k, v in row.items()} for row in self.changes)
        doc = {"summary": self.counts, "changes": self.changes, "remaining": [self.remaining_entry(f) for f in self.remaining]}
        try:
            atomic_write(csv_path, buf.getvalue().encode("utf-8"))
            atomic_write(base + ".json", (json_text(doc) + "\n").encode("utf-8"))
        except OSError as exc:
            raise AscendifyError(f"{text_safe(csv_path)}: cannot write the change log ({exc.strerror}); choose another folder")


@dataclass
class _Passes:
    text: str
    applied: list  # (finding, k): the finding's positions are lines of texts[k]
    texts: list  # texts[0] = the source, texts[k] = the text after pass k
    maps: list  # maps[k]: line of texts[k] -> line of texts[k + 1] (from the replacements of pass k + 1)
    remaining: list
    unsafe: int
    error: Optional[str]
    summary: Optional[dict] = None  # the module summary of the final text (project pass)


def _fix_passes(src: SourceFile, findings: list[Finding], settings: Settings, rel: str, dispatch=None) -> _Passes:
    text = src.text
    texts = [text]
    maps: list = []
    applied_all: list = []
    tree = None
    current = findings
    held = _held(findings, text)
    error = None
    summary: Optional[dict] = None
    for k in range(MAX_PASSES):
        outcome = apply_fixes(replace(src, text=text), current, settings.unsafe_fixes, tree)
        if outcome.error:
            error = outcome.error
            break
        if not outcome.changed:
            break
        applied_all.extend((f, k) for f in outcome.applied)
        text = final_eol(text, outcome.text)
        texts.append(text)
        maps.append(outcome.source_map.lines())  # final_eol only puts back the last line's ending
        out: list = []
        tree = outcome.tree if text == outcome.text else None  # the fix's own check parsed it: not twice
        current = analyze_source(replace(src, text=text), rel, settings, dispatch, out, tree=tree)
        summary = out[0] if out else {}
        if held:
            _hold(current, held, text)
    # every finding of the final text is left for a person: a fix still offered there did not apply
    # (it conflicted, its edit found no place, or it needs --unsafe-fixes), and is never counted as done
    remaining = current
    unsafe = sum(1 for f in remaining if f.fix is not None and not f.fix.safe)
    return _Passes(text, applied_all, texts, maps, remaining, unsafe, error, summary)


def _line_key(f: Finding, text: str) -> tuple:
    lines = text.splitlines()
    return f.code, lines[f.line - 1].strip() if 0 < f.line <= len(lines) else ""


def _held(findings: list, text: str) -> dict:
    """(code, line text) → note, for findings whose fix the project pass took back (an ``intent`` note on a
    finding without a fix: a guard whose branch calls a helper into the project's own CUDA code)."""
    return {_line_key(f, text): n for f in findings if f.fix is None for n in f.notes if n.kind == "intent"}


def _hold(findings: list, held: dict, text: str) -> None:
    """A later pass re-analyses the file alone: the project pass's hold stays (the same code on the same line)."""
    for f in findings:
        if f.fix is not None:
            n = held.get(_line_key(f, text))
            if n is not None:
                f.fix = None
                f.notes.append(n)


def fix_source(src: SourceFile, findings: list[Finding], settings: Settings, rel: str) -> tuple[str, list[Finding], list[Finding], int, Optional[str]]:
    """Apply fixes until nothing more applies (at most 5 passes).

    Returns (new text, applied findings (original positions for pass 1),
    remaining findings in the new text, unsafe fixes skipped, error).
    """
    p = _fix_passes(src, findings, settings, rel)
    return p.text, [f for f, _ in p.applied], p.remaining, p.unsafe, p.error


# ---------------------------------------------------------------------- line maps
_BREAK = re.compile(r"\r\n|\r|\n")


def _lines(text: str) -> list[str]:
    """Lines as Python (and ``ast``) counts them: CRLF, CR and LF breaks only."""
    parts = _BREAK.split(text)
    if parts and parts[-1] == "":
        parts.pop()
    return parts


class LineMap:
    """Line numbers of ``texts[0]`` ↔ ``texts[-1]`` of a file fixed in passes (1-based), from the
    source maps of the passes (``maps[k]``: line of ``texts[k]`` -> line of ``texts[k + 1]``, the
    replacements of pass ``k + 1``): a line the fixes did not touch keeps its code, shifted by the
    lines inserted or removed above it; a changed line maps to the line its code is on; a line whose
    code a fix replaced from a line above it (and whose replacement has fewer lines) to None; a line
    a fix added has no line of the source."""

    def __init__(self, maps: list):
        self.maps = maps
        self._inverse: dict = {}

    def _back_of(self, k: int) -> dict:
        if k not in self._inverse:
            inv: dict = {}
            for old, new in sorted(self.maps[k].items()):
                if new is not None:
                    inv.setdefault(new, old)
            self._inverse[k] = inv
        return self._inverse[k]

    def forward(self, line: Optional[int], k: int = 0) -> Optional[int]:
        """Line of the last text of the line ``line`` of ``texts[k]``."""
        for m in self.maps[k:]:
            if line is None:
                break
            line = m.get(line)
        return line

    def back(self, line: Optional[int], k: Optional[int] = None) -> Optional[int]:
        """Line of the source of the line ``line`` of ``texts[k]`` (default: the last)."""
        for j in reversed(range(len(self.maps) if k is None else k)):
            if line is None:
                break
            line = self._back_of(j).get(line)
        return line


def _cell_lines(src: SourceFile, text: str) -> Callable[[Optional[int]], Optional[int]]:
    """Line of ``text`` (the source or a fixed version of it) → line to show: the line
    itself for .py files, the line in its code cell for notebooks."""
    if not src.is_notebook:
        return lambda line: line
    markers = {CELL_MARKER.format(idx) for _, _, idx in src.cell_starts}
    starts = [n for n, ln in enumerate(_lines(text), 1) if ln in markers]

    def in_cell(line: Optional[int]) -> Optional[int]:
        if line is None:
            return None
        first = None
        for n in starts:
            if n < line:
                first = n
            else:
                break
        return line - first if first is not None else line

    return in_cell


class _FileLines:
    """Source and migrated line of any finding of one fixed file."""

    def __init__(self, src: SourceFile, texts: list[str], maps: list):
        self.texts = texts
        self.map = LineMap(maps)
        self.show_src = _cell_lines(src, texts[0])
        self.show_new = _cell_lines(src, texts[-1])

    def of(self, line: int, k: int) -> tuple[Optional[int], Optional[int]]:
        """(source line, migrated line) of ``line`` of ``texts[k]``."""
        return self.show_src(self.map.back(line, k)), self.show_new(self.map.forward(line, k))


def _change_row(f: Finding, lines: Optional[tuple] = None) -> dict:
    here = f.cell_line or f.line
    source_line, migrated_line = lines or (here, here)
    start = source_line if source_line is not None else here
    return {"file": f.path, "cell": f.cell if f.cell is not None else "", "start_line": start, "end_line": start + f.end_line - f.line,
            "code": f.code, "operation": f.fix.operation if f.fix else "", "message": f.full_message,
            "safe": bool(f.fix and f.fix.safe), "source_line": source_line, "migrated_line": migrated_line}


# ---------------------------------------------------------------------- the copy
def _missing(run: FixRun, path: str, why: str) -> None:
    """Record a file that is not in the migrated copy: a problem line (non-zero exit) and,
    unless the scan already reported the file as unreadable, a SYN003 finding."""
    from ascendify.rules.registry import load_rules

    shown = display_path(path)
    message = f"{why}; not in the migrated copy"
    run.problems.append((shown, message))
    if not any(f.path == shown and f.code.startswith("SYN") for f in run.remaining):
        rule = load_rules()["SYN003"]
        run.remaining.append(Finding("SYN003", message, shown, 1, 0, 1, 0, rule.severity, rule.category))


def _link_target(s: str, parent_real: str, root_real: str) -> str:
    """What a link copied from ``s`` points to: into the copy (relative) where ``s`` points
    into the tree, else to the same place by absolute path (broken links kept as written)."""
    target = os.readlink(s)
    real = os.path.realpath(s)
    if is_within(real, root_real):
        return os.path.relpath(real, parent_real)
    if os.path.isabs(target) or not os.path.lexists(real):
        return target
    return real


def _copy_link(s: str, d: str, parent_real: str, root_real: str, run: FixRun) -> None:
    try:
        target = _link_target(s, parent_real, root_real)
        if os.path.islink(d):
            os.unlink(d)
        elif os.path.lexists(d):
            run.problems.append((display_path(s), f"a symlink, but the output folder has a {'folder' if os.path.isdir(d) else 'file'} {text_safe(d)} in its place; not copied (remove it)"))
            return
        os.symlink(target, d, target_is_directory=os.path.isdir(s))
    except OSError as exc:
        _missing(run, s, f"cannot copy the symlink ({exc.strerror or exc})")


def _copy_tree(src_root: str, dst_root: str, skip: set[str], out_abs: str, run: FixRun) -> None:
    """Copy ``src_root`` to ``dst_root``: files as they are (mode kept), symlinks as links
    (into the copy where they point into the tree), except the files in ``skip`` (written
    fixed later), the output folder and :data:`SKIP_DIRS`.  What cannot be copied is
    recorded in ``run`` (never skipped silently)."""
    root_real = os.path.realpath(src_root)

    def onerror(exc: OSError) -> None:
        _missing(run, exc.filename or src_root, f"cannot list folder ({exc.strerror or exc}); its files are")

    for dirpath, dirnames, filenames in os.walk(src_root, onerror=onerror):
        rel_dir = os.path.relpath(dirpath, src_root)
        dst_dir = os.path.normpath(os.path.join(dst_root, rel_dir))
        parent_real = os.path.realpath(dirpath)
        os.makedirs(dst_dir, exist_ok=True)
        keep = []
        for d in dirnames:
            s = os.path.join(dirpath, d)
            if d in SKIP_DIRS or is_within(s, out_abs):
                continue
            if os.path.islink(s):  # os.walk does not enter it: copy the link itself
                _copy_link(s, os.path.join(dst_dir, d), parent_real, root_real, run)
            else:
                keep.append(d)
        dirnames[:] = keep
        for fn in filenames:
            s = os.path.join(dirpath, fn)
            if os.path.abspath(s) in skip:
                continue
            d = os.path.join(dst_dir, fn)
            if os.path.islink(s):
                _copy_link(s, d, parent_real, root_real, run)
                continue
            try:
                mode = os.stat(s).st_mode
                if stat.S_ISFIFO(mode):  # a named pipe: make one in the copy (reading it would block)
                    if not os.path.exists(d):
                        os.mkfifo(d, stat.S_IMODE(mode))
                    continue
                if not stat.S_ISREG(mode):
                    _missing(run, s, "not a regular file (a socket or device)")
                    continue
                shutil.copy2(s, d)
            except OSError as exc:
                _missing(run, s, f"cannot read file ({exc.strerror or exc})")


def _outside_link(path: str, paths: tuple) -> Optional[str]:
    """The folder link on the way from a given folder to ``path`` (a link scanned into,
    so one pointing outside that folder), or None."""
    ap = os.path.abspath(path)
    for p in paths:
        base = os.path.abspath(p)
        if not os.path.isdir(p) or not is_within(ap, base) or ap == base:
            continue
        parts = os.path.relpath(os.path.dirname(ap), base).split(os.sep)
        cur = base
        for part in parts:
            if part in ("", "."):
                continue
            cur = os.path.join(cur, part)
            if os.path.islink(cur):
                return cur
    return None


# ---------------------------------------------------------------------- one file, in a worker
@dataclass
class _FileFix:
    """What fixing one file gave (sent back from a worker process)."""

    rel: str
    path: str
    errors: list = field(default_factory=list)  # (rel, message)
    unsafe: int = 0
    new_bytes: Optional[bytes] = None  # None: nothing changed
    changes: list = field(default_factory=list)  # change-log rows
    applied: list = field(default_factory=list)
    texts: tuple = ("", "")
    diff: Optional[str] = None
    unwritten: Optional[str] = None  # mode write: why the fixed text could not be written (the OS's reason); file unchanged
    final: list = field(default_factory=list)  # findings of the final text: what a scan of the copy finds
    final_lines: dict = field(default_factory=dict)  # line of the fixed text -> (source, migrated) line
    summary: Optional[dict] = None  # module summary of the fixed text ({} when it has none)


_fix_state: dict = {}


def _init_fix_worker(settings: Settings) -> None:
    from ascendify.scan.engine import Dispatch

    _fix_state["settings"] = settings
    _fix_state["dispatch"] = Dispatch.build(settings)


def _fix_file(job: tuple) -> _FileFix:
    """Fix one file: read it, apply fixes until nothing more applies, and (mode ``write``) write it."""
    rel, path, fixable, mode = job
    settings: Settings = _fix_state["settings"]
    out = _FileFix(rel, path)
    src = read_source(path)
    if isinstance(src, SourceProblem):
        out.errors.append((rel, src.message))
        return out
    passes = _fix_passes(src, fixable, settings, rel, _fix_state.get("dispatch"))
    text = passes.text
    if passes.error:
        out.errors.append((rel, passes.error))
    out.unsafe = passes.unsafe
    out.final = passes.remaining
    if not passes.applied or text == src.text:
        return out
    lines = _FileLines(src, passes.texts, passes.maps)
    last = len(passes.texts) - 1
    out.changes = [_change_row(f, lines.of(f.line, k)) for f, k in passes.applied]
    out.applied = [f for f, _ in passes.applied]
    # the lines a remaining finding can be on: the file's own, and its call sites (the project pass's)
    needed = {f.line for f in passes.remaining} | {x["tok"][0] for u in (passes.summary or {}).get("uses", ())
                                                   for x in [u] + u.get("more", [])}
    out.final_lines = {n: lines.of(n, last) for n in needed}
    out.summary = passes.summary
    out.texts = (src.text, text)
    new_bytes = encode_source(src, text)
    out.new_bytes = new_bytes
    if mode == "diff":
        if src.is_notebook:
            a, b = src.raw.decode("utf-8", "replace"), new_bytes.decode("utf-8", "replace")
        else:
            a, b = src.text, text
        out.diff = "".join(difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True), "a/" + rel.lstrip("/"), "b/" + rel.lstrip("/")))
    elif mode == "write":
        try:
            atomic_write(path, new_bytes, keep_read_only=True)  # a file the user made read-only stays as it is
        except OSError as exc:  # not an error of the fix: counted as "not written", neither fixed nor for a person
            out.unwritten = exc.strerror or str(exc)
    return out


def _map_files(todo: list, settings: Settings, jobs: Optional[int], progress: Optional[Callable[[int], None]]):
    """:func:`_fix_file` of every job, in order: in ``jobs`` processes (default: CPU count) as the
    scan does, in this one for few files or ``jobs=1``."""
    from ascendify.scan.engine import _mp_context

    jobs = jobs or os.cpu_count() or 1
    if jobs > 1 and len(todo) >= 16:
        chunk = max(1, len(todo) // (jobs * 8))
        with worker_pool(min(jobs, len(todo)), _init_fix_worker, (settings,), _mp_context()) as ex:  # Ctrl-C: procutil
            for out in ex.map(_fix_file, todo, chunksize=chunk):
                if progress:
                    progress(1)
                yield out
        return
    _init_fix_worker(settings)
    for job in todo:
        out = _fix_file(job)
        if progress:
            progress(1)
        yield out


def fix_tree(paths: tuple, result: ScanResult, settings: Settings, mode: str, out_dir: Optional[str] = None,
             changelog: Optional[str] = None, jobs: Optional[int] = None,
             progress: Optional[Callable[[int], None]] = None) -> FixRun:
    """Fix every file of ``result`` that has applicable fixes.

    mode ``diff`` only builds ``run.diff``; ``write`` replaces files in place
    (atomically, mode kept); ``output`` copies ``paths`` into ``out_dir``
    with fixed files written there, plus the change log (``changelog``,
    default ``out_dir/ascendify-changes.csv``).  Files under the output folder
    (a previous copy inside the project) are left out.  Files the copy lacks are
    in ``run.problems``.  Files are fixed in ``jobs`` processes (default: CPU count, as the
    scan); ``progress(1)`` is called after each file with fixes.
    """
    run = FixRun()
    by_file: dict[str, list[Finding]] = {}
    for f in result.findings:
        by_file.setdefault(f.path, []).append(f)
    out_abs = ""
    if mode == "output":
        out_abs = os.path.abspath(out_dir)
        for p in paths:
            if os.path.abspath(p) == out_abs:
                raise AscendifyError(f"{out_dir}: the output folder must differ from the input (use --write to edit in place)")
    diffs = []
    written: dict[str, bytes] = {}
    jobs_todo: list = []
    joined = {id(f) for f in getattr(result, "joined", ())}
    final_of: dict = {}  # rel -> the file's findings in its final state (the project pass's come after)
    lines_of: dict = {}  # rel -> (source, migrated) line of each line of a fixed file's final text
    summaries = dict(getattr(result, "summaries", {}) or {})
    for rel in sorted(by_file):
        findings = by_file[rel]
        path = rel if os.path.exists(rel) else os.path.abspath(rel)
        if mode == "output" and is_within(path, out_abs):
            continue  # an earlier migrated copy inside the project
        final_of[rel] = [f for f in findings if id(f) not in joined]  # unless fixing changes the file
        fixable = [f for f in findings if f.fix is not None]
        if not fixable:
            continue
        fixable += [f for f in findings if f.fix is None and any(n.kind == "intent" for n in f.notes)]  # held in every pass
        if mode == "output":
            link = _outside_link(path, paths)
            if link is not None:
                run.errors.append((rel, f"reached through the folder link {display_path(link)} -> {os.path.realpath(link)}, which the copy keeps as a link, "
                                        "so its fixes were not written there; fix that folder on its own"))
                continue
        jobs_todo.append((rel, path, fixable, mode))
    for out in _map_files(jobs_todo, settings, jobs, progress):
        rel = out.rel
        run.errors.extend(out.errors)
        run.unsafe_skipped += out.unsafe  # an unwritten file's unsafe-fixable findings remain as well
        if out.unwritten is not None:  # the file is unchanged: its fixes are "not written", not fixed and not for a person
            final_of[rel], n = _unwritten_left(final_of[rel], out.changes)
            run.unwritten.append((rel, out.unwritten, n))
            continue
        if out.new_bytes is None:  # unchanged: its findings stand as the scan gave them
            continue
        final_of[rel] = out.final
        lines_of[rel] = out.final_lines
        if out.summary is not None:
            summaries[rel] = out.summary
        run.files_changed.append(rel)
        run.changes.extend(out.changes)
        run.applied.extend(out.applied)
        run.texts[rel] = out.texts
        written[os.path.abspath(out.path)] = out.new_bytes
        if out.diff is not None:
            diffs.append(out.diff)
    # what is left is what a scan of the migrated copy finds: each file's findings in its final state and
    # the project pass over the final summaries (a call site's DEV026 goes once its helper is fixed)
    from ascendify.scan.engine import project_pass

    run.remaining, _joined = project_pass([f for fs in final_of.values() for f in fs], summaries, settings)
    for f in run.remaining:
        at = lines_of.get(f.path, {}).get(f.line)
        if at is not None:
            run.lines[id(f)] = at
    from ascendify.output.summary import fix_counts, fixed_by_run, fixed_sentence

    run.fixed_ids = fixed_by_run(result.findings, run)
    counts = fix_counts(result.findings, settings.unsafe_fixes, run.fixed_ids)
    left_unsafe = sum(1 for f in run.remaining if f.fix is not None and not f.fix.safe and not settings.unsafe_fixes)
    # findings and fixed: the scan the run started from; open: what a scan of the final state finds (a fix
    # can also settle findings it did not touch, a call site's DEV026, or leave ones it could not place)
    open_ = len(run.remaining)
    # findings = fixed + settled + open: settled are the scan's findings without a fix of their own that the
    # final state no longer has (a call site's DEV026 once its helper is fixed); new ones the fixes left are counted
    unwritten = sum(n for _, _, n in run.unwritten)
    done = counts["fixed"] + unwritten
    counts.update(open=open_, unsafe=left_unsafe, manual=open_ - left_unsafe, not_written=unwritten,
                  settled=max(0, counts["findings"] - done - open_), new=max(0, open_ - (counts["findings"] - done)))
    run.counts = counts
    run.counts["text"] = fixed_sentence(run.counts)
    run.diff = "".join(d if d.endswith("\n") else d + "\n\\ No newline at end of file\n" for d in diffs)
    if mode == "output":
        _write_output(paths, out_dir, written, run, changelog or os.path.join(out_dir, "ascendify-changes.csv"))
    return run


def _unwritten_left(findings: list, changes: list) -> tuple:
    """(findings left, how many taken out): the findings of a file ``--write`` could not write, less
    those its fixes (``changes``, the rows the run would have logged) would have fixed, matched as
    :func:`ascendify.output.summary.fixed_by_run` matches them: what a person has to do once the
    fixes are written."""
    from ascendify.output.summary import finding_key

    rows: dict = {}
    for c in changes:
        k = (c["file"], c["cell"], c["source_line"], c["code"])
        rows[k] = rows.get(k, 0) + 1
    left = []
    for f in sorted(findings, key=Finding.sort_key):
        k = finding_key(f)
        if f.fix is not None and rows.get(k, 0) > 0:
            rows[k] -= 1
            continue
        left.append(f)
    return left, len(findings) - len(left)


def _write_output(paths: tuple, out_dir: str, written: dict, run: FixRun, changelog: str) -> None:
    out_abs = os.path.abspath(out_dir)
    try:
        os.makedirs(out_dir, exist_ok=True)
        out_real = os.path.realpath(out_dir)
        single_dir = len(paths) == 1 and os.path.isdir(paths[0])
        for p in paths:
            p_abs = os.path.abspath(p)
            dst = out_dir if single_dir else os.path.join(out_dir, os.path.basename(p_abs.rstrip(os.sep)) or "root")
            if os.path.isdir(p):
                _copy_tree(p, dst, set(written), out_abs, run)
                base = p_abs
            else:
                os.makedirs(os.path.dirname(os.path.abspath(dst)) or ".", exist_ok=True)
                if p_abs not in written:
                    try:
                        shutil.copy2(p, dst)
                    except OSError as exc:
                        _missing(run, p, f"cannot read file ({exc.strerror or exc})")
                base = None
            for src_abs, data in written.items():
                if base is not None and is_within(src_abs, base) and src_abs != base:
                    target = os.path.join(dst, os.path.relpath(src_abs, base))
                elif base is None and src_abs == p_abs:
                    target = dst
                else:
                    continue
                if not is_within(os.path.realpath(target), out_real):  # never write through a link out of the copy
                    run.errors.append((display_path(src_abs), f"{text_safe(target)} leads out of the output folder (a symlink); the fixed file was not written"))
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                atomic_write(target, data, like=src_abs)
        os.makedirs(os.path.dirname(os.path.abspath(changelog)), exist_ok=True)
        run.write_changelog(changelog)
    except OSError as exc:
        raise AscendifyError(f"{out_dir}: cannot write the migrated copy ({exc.strerror}); choose another --out-dir folder")
