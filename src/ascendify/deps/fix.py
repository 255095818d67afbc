"""``fix`` for dependency files: the ``torch-npu==X`` pin next to the pinned torch, in the file's style.

requirements files: a new line right after the torch line (after its continuation lines), with
the torch line's indentation, specifier spacing and marker, and the file's line ending.
pyproject.toml PEP 621 arrays: a new element right after the torch string, with its quote
character; on its own line with the same indentation (and the trailing-comma habit of the
array) when the torch string has its own line, else inline.  Poetry tables: a new
``torch-npu = "X"`` key line after ``torch = ...`` with the same spacing and quoting.

Every edited text is re-parsed before it is written (tomllib for pyproject.toml, this package's
requirements reader for requirements files) and must then declare the new pin; writes are
atomic (:func:`ascendify.fsutil.atomic_write`).  Only the torch-npu pin and replacements that a
source confirms as drop-in (``safe_replacement`` in ``deps/data/packages.toml``) are written;
everything else stays a finding.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from typing import List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ascendify.deps.parse import _STRING, DepFile, Requirement, normalize, parse_requirement, split_lines
from ascendify.diagnostics import Edit, Fix


def _eol(text: str) -> str:
    m = re.search(r"\r\n|\r|\n", text)
    return m.group(0) if m else "\n"


def _new_requirement_text(req: Requirement, name: str, version: str) -> str:
    """``req``'s own text with the name replaced by ``name`` and the pinned version by ``version``
    (spacing, operator and marker kept; extras and local label dropped)."""
    if req.url or not req.text.lower().startswith(req.name.lower()):
        return f"{name}=={version}" + (f"; {req.marker}" if req.marker else "")
    rest = req.text[len(req.name):]
    rest = re.sub(r"^\s*\[[^\]]*\]", "", rest)
    pinned = re.escape(req.version or "") + (r"(?:\+[A-Za-z0-9.]+)?" if req.version else "")
    new_rest, n = re.subn(pinned, version, rest, count=1) if req.version else (rest, 0)
    if not n:
        return f"{name}=={version}" + (f"; {req.marker}" if req.marker else "")
    return name + new_rest


def pin_fix(df: DepFile, req: Requirement, npu: str) -> Optional[Fix]:
    """The fix that adds ``torch-npu==npu`` next to ``req`` (the torch requirement) in ``df``,
    or None when this file's shape is not edited (then the finding is reported only)."""
    text = df.text
    if not text:
        return None
    lines = split_lines(text)
    eol = _eol(text)
    if not 0 < req.line <= len(lines):
        return None
    line = lines[req.line - 1]
    indent = line[: len(line) - len(line.lstrip())]
    if req.kind == "requirements":
        last = req.line
        while lines[last - 1].endswith("\\") and last < len(lines):
            last += 1
        new = _new_requirement_text(req, "torch-npu", npu)
        end = len(lines[last - 1])
        edit = Edit("insert", eol + indent + new, (last, end), (last, end))
    elif req.kind == "pep621":
        m = _STRING.match(line, max(req.col - 1, 0))
        if m is None:
            return None
        q = m.group(0)[0]
        new = _new_requirement_text(req, "torch-npu", npu)
        if q in new or "\\" in new:
            return None
        before, after = line[: m.start()], line[m.end():]
        own_line = not before.strip() and re.match(r"^\s*,?\s*(#.*)?$", after)
        if own_line:
            if after.lstrip().startswith(","):
                # after the whole line: a comment after the comma stays on the torch line
                edit = Edit("insert", eol + indent + q + new + q + ",", (req.line, len(line)), (req.line, len(line)))
            else:
                edit = Edit("insert", "," + eol + indent + q + new + q, (req.line, m.end()), (req.line, m.end()))
        else:
            edit = Edit("insert", ", " + q + new + q, (req.line, m.end()), (req.line, m.end()))
    elif req.kind == "poetry":
        km = re.match(r"^(\s*)([\"']?)([A-Za-z0-9._-]+)\2(\s*=\s*)(.*)$", line)
        if km is None or normalize(km.group(3)) != "torch":
            return None
        value = km.group(5)
        vm = re.search(r"([\"'])([^\"']*)\1", value)
        if vm is None:
            return None
        qv = vm.group(1)
        key_q = km.group(2)
        new_line = f"{km.group(1)}{key_q}torch-npu{key_q}{km.group(4)}{qv}{npu}{qv}"
        edit = Edit("insert", eol + new_line, (req.line, len(line)), (req.line, len(line)))
    else:
        return None
    return Fix((edit,), safe=True, operation=f"add torch-npu=={npu} next to torch=={req.version}")


def replace_fix(df: DepFile, req: Requirement, new_name: str) -> Optional[Fix]:
    """The fix that renames ``req``'s package to ``new_name`` (a drop-in replacement a source
    confirms), keeping the rest of the requirement; None when the name is not where it should be."""
    lines = split_lines(df.text) if df.text else []
    if req.url or not 0 < req.line <= len(lines):
        return None
    line = lines[req.line - 1]
    if req.kind == "poetry":
        km = re.match(r"^(\s*)([\"']?)([A-Za-z0-9._-]+)\2", line)
        if km is None or normalize(km.group(3)) != req.key:
            return None
        start, end = km.start(3), km.end(3)
    else:
        start, end = req.col, req.col + len(req.name)
        if line[start:end] != req.name:
            return None
    return Fix((Edit("replace", new_name, (req.line, start), (req.line, end)),), safe=True, operation=f"replace {req.name} with {new_name}")


def apply_edits(text: str, edits: List[Edit]) -> str:
    """``text`` with the ``insert`` / ``replace`` edits applied (positions: 1-based line, 0-based
    character column of the original text); later positions first, so earlier ones stay valid.
    Overlapping edits raise ``ValueError``."""
    starts = [0]
    for m in re.finditer(r"\r\n|\r|\n", text):
        starts.append(m.end())
    offs = []
    for e in edits:
        line, col = e.start
        if not 0 < line <= len(starts):
            raise ValueError(f"edit at line {line} outside the file")
        end = starts[e.end[0] - 1] + e.end[1] if e.kind == "replace" else starts[line - 1] + col
        offs.append((starts[line - 1] + col, end, e))
    offs.sort(key=lambda t: (t[0], t[1]))
    for a, b in zip(offs, offs[1:]):
        if b[0] < a[1]:
            raise ValueError("overlapping edits")
    out = text
    for off, end, e in sorted(offs, key=lambda t: (-t[0], -t[1])):
        out = out[:off] + e.text + out[end:]
    return out


def verify(kind: str, new_text: str, path: str, added: List[str]) -> Optional[str]:
    """None when ``new_text`` parses and declares every requirement name in ``added``, else why not."""
    if kind == "pyproject":
        try:
            doc = tomllib.loads(new_text)
        except tomllib.TOMLDecodeError as exc:
            return f"the edited pyproject.toml does not parse ({exc})"
        declared = set()
        proj = doc.get("project") or {}
        for v in list(proj.get("dependencies") or []) + [x for g in (proj.get("optional-dependencies") or {}).values() for x in g]:
            r = parse_requirement(str(v), path, 1, 0, "pep621")
            if r is not None:
                declared.add(r.key)
        poetry = (doc.get("tool") or {}).get("poetry") or {}
        tables = [poetry.get("dependencies") or {}] + [g.get("dependencies") or {} for g in (poetry.get("group") or {}).values() if isinstance(g, dict)]
        for t in tables:
            declared |= {normalize(k) for k in t}
    else:
        declared = set()
        for ln in split_lines(new_text):
            s = ln.split(" #")[0].strip()
            if s and not s.startswith(("#", "-")):
                r = parse_requirement(s, path, 1, 0, "requirements")
                if r is not None:
                    declared.add(r.key)
    missing = [a for a in added if normalize(a) not in declared]
    return f"the edited file does not declare {', '.join(missing)}; left unchanged" if missing else None


# ----------------------------------------------------------------------------- the fix run hook
def fix_tree(paths: tuple, result, settings, mode: str, out_dir: Optional[str] = None, changelog: Optional[str] = None, **kw):
    """:func:`ascendify.fix.run.fix_tree` plus the dependency files: DEP findings are held out of
    the Python fix run, their fixes applied here (diff / write / the migrated copy), and the
    run's change log, diff, remaining findings and counts updated to include them."""
    from ascendify.fix.run import fix_tree as py_fix_tree

    dep = [f for f in result.findings if f.code.startswith("DEP")]
    if not dep:
        return py_fix_tree(paths, result, settings, mode, out_dir, changelog=changelog, **kw)
    original = result.findings
    result.findings = [f for f in original if not f.code.startswith("DEP")]
    try:
        run = py_fix_tree(paths, result, settings, mode, out_dir, changelog=changelog, **kw)
    finally:
        result.findings = original
    _apply_to_run(run, dep, paths, settings, mode, out_dir, changelog, original)
    return run


def _out_target(paths: tuple, out_dir: str, src_abs: str) -> Optional[str]:
    """Where ``src_abs`` lands in the migrated copy (as fix.run._write_output places files)."""
    from ascendify.fsutil import is_within

    single_dir = len(paths) == 1 and os.path.isdir(paths[0])
    for p in paths:
        p_abs = os.path.abspath(p)
        dst = out_dir if single_dir else os.path.join(out_dir, os.path.basename(p_abs.rstrip(os.sep)) or "root")
        if os.path.isdir(p) and is_within(src_abs, p_abs) and src_abs != p_abs:
            return os.path.join(dst, os.path.relpath(src_abs, p_abs))
        if src_abs == p_abs:
            return dst
    return None


def _apply_to_run(run, dep: list, paths: tuple, settings, mode: str, out_dir: Optional[str], changelog: Optional[str], all_findings: list) -> None:
    from ascendify.fsutil import atomic_write
    from ascendify.output.summary import fix_counts, fixed_sentence

    by_file: dict = {}
    for f in dep:
        by_file.setdefault(f.path, []).append(f)
    remaining = []
    fixed_ids = set(run.fixed_ids)
    diffs = []
    for rel in sorted(by_file):
        fs = by_file[rel]
        todo = [f for f in fs if f.fix is not None and (f.fix.safe or settings.unsafe_fixes)]
        path = rel if os.path.exists(rel) else os.path.abspath(rel)
        if not todo:
            remaining.extend(fs)
            continue
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            run.errors.append((rel, f"cannot read ({exc.strerror or exc}); dependency fixes not applied"))
            remaining.extend(fs)
            continue
        bom = raw.startswith(b"\xef\xbb\xbf")
        text = raw[3:].decode("utf-8", "replace") if bom else raw.decode("utf-8", "replace")
        edits = [e for f in todo for e in f.fix.edits]
        try:
            new_text = apply_edits(text, edits)
        except ValueError as exc:
            run.errors.append((rel, f"{exc}; dependency fixes not applied"))
            remaining.extend(fs)
            continue
        kind = "pyproject" if os.path.basename(path).lower() == "pyproject.toml" else "requirements"
        added = [e.text if e.kind == "replace" else "torch-npu" for f in todo for e in f.fix.edits]
        why = verify(kind, new_text, rel, added)
        if why:
            run.errors.append((rel, why))
            remaining.extend(fs)
            continue
        data = (b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8")
        if mode == "write":
            try:
                atomic_write(path, data, keep_read_only=True)  # a read-only requirements.txt stays as it is
            except OSError as exc:  # "not written": neither fixed nor left for a person (fix.run does the same)
                run.unwritten.append((rel, exc.strerror or str(exc), len(todo)))
                remaining.extend(f for f in fs if f not in todo)
                continue
        elif mode == "output" and out_dir:
            target = _out_target(paths, out_dir, os.path.abspath(path))
            if target is None:
                remaining.extend(fs)
                continue
            os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
            atomic_write(target, data, like=path)
        inserted = sorted(e.start[0] for e in edits if e.kind == "insert" and ("\n" in e.text or "\r" in e.text))
        for f in fs:
            if f in todo:
                fixed_ids.add(id(f))
                new_line = f.line + sum(1 for n in inserted if n < f.line)
                run.changes.append({"file": rel, "cell": "", "start_line": f.line, "end_line": f.end_line, "code": f.code,
                                    "operation": f.fix.operation, "message": f.message, "safe": f.fix.safe,
                                    "source_line": f.line, "migrated_line": new_line})
                run.applied.append(f)
            else:
                remaining.append(f)
                run.lines[id(f)] = (f.line, f.line + sum(1 for n in inserted if n < f.line))
        run.files_changed.append(rel)
        run.texts[rel] = (text, new_text)
        diffs.append("".join(difflib.unified_diff(text.splitlines(keepends=True), new_text.splitlines(keepends=True), "a/" + rel.lstrip("/"), "b/" + rel.lstrip("/"))))
    run.remaining = sorted(list(run.remaining) + remaining, key=lambda f: f.sort_key())
    run.diff += "".join(d if d.endswith("\n") else d + "\n\\ No newline at end of file\n" for d in diffs)
    run.fixed_ids = fixed_ids
    counts = fix_counts(all_findings, settings.unsafe_fixes, fixed_ids)
    left_unsafe = sum(1 for f in run.remaining if f.fix is not None and not f.fix.safe and not settings.unsafe_fixes)
    not_written = sum(n for _, _, n in run.unwritten)
    counts.update(open=len(run.remaining), unsafe=left_unsafe, manual=len(run.remaining) - left_unsafe, not_written=not_written,
                  findings=counts["fixed"] + len(run.remaining) + not_written)
    counts["fixed_share"] = round(counts["fixed"] / counts["findings"], 3) if counts["findings"] else 0.0
    counts["text"] = fixed_sentence(counts)
    run.counts = counts
    if mode == "output" and out_dir:
        run.write_changelog(changelog or os.path.join(out_dir, "ascendify-changes.csv"))
