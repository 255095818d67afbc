"""Fix a whole scan result: diff, in-place write, or a migrated copy of the tree."""

from __future__ import annotations

import csv
import difflib
import json
import os
import shutil
from dataclasses import dataclass, field, replace
from typing import Optional

from ascendify.config import Settings
from ascendify.errors import AscendifyError
from ascendify.fix.apply import apply_fixes
from ascendify.fsutil import atomic_write
from ascendify.scan.engine import ScanResult, analyze_source
from ascendify.scan.finding import Finding
from ascendify.scan.source import SourceFile, SourceProblem, encode_source, final_eol, read_source

MAX_PASSES = 5
CHANGELOG_FIELDS = ("file", "cell", "start_line", "end_line", "code", "operation", "message", "safe")
"""Change-log columns; ``cell`` is the notebook code-cell number (empty for .py files), and the
lines are then lines of that cell."""


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
    errors: list = field(default_factory=list)  # (path, message)

    def stats(self) -> dict:
        return {"applied": len(self.changes), "files_changed": len(self.files_changed),
                "remaining": len(self.remaining), "unsafe_skipped": self.unsafe_skipped}

    def write_changelog(self, csv_path: str) -> None:
        """Write the change log as CSV at ``csv_path`` and JSON beside it (``.json``)."""
        base, _ = os.path.splitext(csv_path)
        try:
            with open(csv_path, "w", encoding="utf-8", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=CHANGELOG_FIELDS, lineterminator="\n")
                w.writeheader()
                w.writerows(self.changes)
            with open(base + ".json", "w", encoding="utf-8") as fh:
                json.dump({"changes": self.changes, "remaining": [f.to_dict() for f in self.remaining]}, fh, indent=2, ensure_ascii=False)
        except OSError as exc:
            raise AscendifyError(f"{csv_path}: cannot write the change log ({exc.strerror})")


def fix_source(src: SourceFile, findings: list[Finding], settings: Settings, rel: str) -> tuple[str, list[Finding], list[Finding], int, Optional[str]]:
    """Apply fixes until nothing more applies (at most 5 passes).

    Returns (new text, applied findings (original positions for pass 1),
    remaining findings in the new text, unsafe fixes skipped, error).
    """
    text = src.text
    applied_all: list[Finding] = []
    current = findings
    error = None
    for _ in range(MAX_PASSES):
        outcome = apply_fixes(replace(src, text=text), current, settings.unsafe_fixes)
        if outcome.error:
            error = outcome.error
            break
        if not outcome.changed:
            break
        applied_all.extend(outcome.applied)
        text = final_eol(text, outcome.text)
        current = analyze_source(replace(src, text=text), rel, settings)
    if error or not applied_all:
        remaining = current
    else:
        remaining = [f for f in current if not (f.fix is not None and (f.fix.safe or settings.unsafe_fixes))]
    unsafe = sum(1 for f in remaining if f.fix is not None and not f.fix.safe)
    return text, applied_all, remaining, unsafe, error


def _change_row(f: Finding) -> dict:
    return {"file": f.path, "cell": f.cell if f.cell is not None else "", "start_line": f.cell_line or f.line, "end_line": f.end_line - f.line + (f.cell_line or f.line),
            "code": f.code, "operation": f.fix.operation if f.fix else "", "message": f.message,
            "safe": bool(f.fix and f.fix.safe)}


def _copy_tree(src_root: str, dst_root: str, skip: set[str], out_abs: str) -> None:
    for dirpath, dirnames, filenames in os.walk(src_root):
        if os.path.abspath(dirpath).startswith(out_abs):
            dirnames[:] = []
            continue
        dirnames[:] = [d for d in dirnames if not os.path.abspath(os.path.join(dirpath, d)).startswith(out_abs) and d not in (".git", "__pycache__", ".ascendify_cache")]
        rel_dir = os.path.relpath(dirpath, src_root)
        os.makedirs(os.path.join(dst_root, rel_dir), exist_ok=True)
        for fn in filenames:
            s = os.path.join(dirpath, fn)
            if os.path.abspath(s) in skip:
                continue
            d = os.path.join(dst_root, rel_dir, fn)
            try:
                if os.path.islink(s):
                    if os.path.lexists(d):
                        os.unlink(d)
                    os.symlink(os.readlink(s), d)
                else:
                    shutil.copy2(s, d)
            except OSError:
                continue  # unreadable files are reported by the scan where it matters


def fix_tree(paths: tuple, result: ScanResult, settings: Settings, mode: str, out_dir: Optional[str] = None,
             changelog: Optional[str] = None) -> FixRun:
    """Fix every file of ``result`` that has applicable fixes.

    mode ``diff`` only builds ``run.diff``; ``write`` replaces files in place
    (atomically, mode kept); ``output`` copies ``paths`` into ``out_dir``
    with fixed files written there, plus the change log (``changelog``,
    default ``out_dir/ascendify-changes.csv``).
    """
    run = FixRun()
    by_file: dict[str, list[Finding]] = {}
    for f in result.findings:
        by_file.setdefault(f.path, []).append(f)
    if mode == "output":
        out_abs = os.path.abspath(out_dir)
        for p in paths:
            if os.path.abspath(p) == out_abs:
                raise AscendifyError(f"{out_dir}: the output folder must differ from the input (use --write to edit in place)")
    diffs = []
    written: dict[str, bytes] = {}
    for rel in sorted(by_file):
        findings = by_file[rel]
        run.remaining.extend(f for f in findings if f.fix is None)
        fixable = [f for f in findings if f.fix is not None]
        if not fixable:
            continue
        path = rel if os.path.exists(rel) else os.path.abspath(rel)
        src = read_source(path)
        if isinstance(src, SourceProblem):
            run.errors.append((rel, src.message))
            continue
        text, applied, remaining, unsafe, error = fix_source(src, fixable, settings, rel)
        if error:
            run.errors.append((rel, error))
        # findings without a fix were counted above; add only the unsafe fixes left out
        run.remaining.extend(f for f in remaining if f.fix is not None and not f.fix.safe and not settings.unsafe_fixes)
        run.unsafe_skipped += unsafe
        if not applied or text == src.text:
            continue
        run.files_changed.append(rel)
        run.changes.extend(_change_row(f) for f in applied)
        run.applied.extend(applied)
        run.texts[rel] = (src.text, text)
        new_bytes = encode_source(src, text)
        written[os.path.abspath(path)] = new_bytes
        if mode == "diff":
            if src.is_notebook:
                a, b = src.raw.decode("utf-8", "replace"), new_bytes.decode("utf-8", "replace")
            else:
                a, b = src.text, text
            diffs.append("".join(difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True), "a/" + rel.lstrip("/"), "b/" + rel.lstrip("/"))))
        elif mode == "write":
            try:
                atomic_write(path, new_bytes)
            except OSError as exc:
                run.errors.append((rel, f"cannot write ({exc.strerror}); file left unchanged"))
    run.remaining.sort(key=Finding.sort_key)
    run.diff = "".join(d if d.endswith("\n") else d + "\n\\ No newline at end of file\n" for d in diffs)
    if mode == "output":
        _write_output(paths, out_dir, written, run, changelog or os.path.join(out_dir, "ascendify-changes.csv"))
    return run


def stale_output_warning(out_dir: str) -> Optional[str]:
    """A warning when ``out_dir`` already has files: they are kept, not removed (None if empty)."""
    try:
        if os.path.isdir(out_dir) and os.listdir(out_dir):
            return f"{out_dir} already exists; files in it that are not in the project are kept (remove the folder for a clean copy)"
    except OSError:
        return None
    return None


def _write_output(paths: tuple, out_dir: str, written: dict, run: FixRun, changelog: str) -> None:
    out_abs = os.path.abspath(out_dir)
    try:
        os.makedirs(out_dir, exist_ok=True)
        single_dir = len(paths) == 1 and os.path.isdir(paths[0])
        for p in paths:
            p_abs = os.path.abspath(p)
            dst = out_dir if single_dir else os.path.join(out_dir, os.path.basename(p_abs.rstrip(os.sep)) or "root")
            if os.path.isdir(p):
                _copy_tree(p, dst, set(written), out_abs)
                base = p_abs
            else:
                os.makedirs(os.path.dirname(os.path.abspath(dst)) or ".", exist_ok=True)
                if p_abs not in written:
                    shutil.copy2(p, dst)
                base = None
            for src_abs, data in written.items():
                if base is not None and (src_abs == base or src_abs.startswith(base + os.sep)):
                    target = os.path.join(dst, os.path.relpath(src_abs, base))
                elif base is None and src_abs == p_abs:
                    target = dst
                else:
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                atomic_write(target, data, like=src_abs)
        os.makedirs(os.path.dirname(os.path.abspath(changelog)), exist_ok=True)
        run.write_changelog(changelog)
    except OSError as exc:
        raise AscendifyError(f"{out_dir}: cannot write the migrated copy ({exc.strerror}); choose another --output folder")
