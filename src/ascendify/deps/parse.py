"""Dependency declarations in every shape a Python project writes them, with positions.

Readers: ``requirements*.txt`` / ``constraints*.txt`` (``-r``/``-c`` includes followed relative
to the including file, ``--index-url``/``--extra-index-url``/``-f`` lines, markers, extras,
local versions such as ``+cu121``, direct URLs and VCS links), ``pyproject.toml`` (PEP 621
``dependencies`` / ``optional-dependencies``, Poetry ``[tool.poetry.dependencies]`` and
``[tool.poetry.group.*.dependencies]``, ``[[tool.poetry.source]]``), ``setup.py``
(``install_requires`` / ``extras_require`` read with ``ast``: literal lists only, else a note),
``setup.cfg`` (``[options] install_requires``, ``[options.extras_require]``),
``environment.yml`` (conda dependencies, channels and the ``pip:`` sub-list) and ``Pipfile``.

Every :class:`Requirement` has the file, the 1-based line and the 0-based character columns of
its text, so a finding lands on its line.  Unreadable or malformed files give a
:class:`DepFile` with a ``problem`` (never an exception).
"""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_INCLUDES = 32
MAX_BYTES = 4 * 1024 * 1024

_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_LOCAL = re.compile(r"\+([A-Za-z0-9][A-Za-z0-9.]*)")


def normalize(name: str) -> str:
    """PEP 503 normalized name: ``Flash_Attn`` -> ``flash-attn``."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Requirement:
    """One declared dependency.

    ``name`` as written, ``key`` normalized; ``spec`` the version specifier (PEP 440 text, or the
    conda/Poetry spec as written); ``version`` the exact version when pinned with ``==``/``===``
    (conda ``=X.Y.Z``, Poetry ``X.Y.Z``), without its local label; ``local`` the local label
    (``cu121`` of ``2.1.0+cu121``); ``url`` a direct / VCS URL; ``build`` a conda build string.
    ``line`` is 1-based, ``col``/``end_col`` 0-based character columns on that line.
    """

    name: str
    key: str
    file: str
    line: int
    col: int
    end_col: int
    text: str
    kind: str  # requirements | pep621 | poetry | setup.py | setup.cfg | conda | conda-pip | pipfile
    spec: str = ""
    version: Optional[str] = None
    local: Optional[str] = None
    extras: Tuple[str, ...] = ()
    marker: str = ""
    url: str = ""
    build: str = ""
    group: str = ""  # optional-dependencies / Poetry group / extras_require key
    origin: str = ""  # the including file for a requirement read through -r/-c

    @property
    def exact(self) -> bool:
        return self.version is not None


@dataclass
class IndexUrl:
    """A package index or find-links location declared in a dependency file."""

    url: str
    file: str
    line: int
    col: int
    end_col: int
    option: str  # --index-url | --extra-index-url | --find-links | poetry-source | pipfile-source | conda-channel


@dataclass
class DepFile:
    path: str
    kind: str
    requirements: List[Requirement] = field(default_factory=list)
    indexes: List[IndexUrl] = field(default_factory=list)
    notes: List[Tuple[int, int, str]] = field(default_factory=list)  # (line, col, message): what could not be read
    includes: List[str] = field(default_factory=list)  # files read through -r / -c
    problem: Optional[str] = None
    text: str = ""
    constraint: bool = False  # a constraints file (named constraints*, or reached through -c): it pins, it installs nothing


# ----------------------------------------------------------------------------- PEP 508 lines
def parse_requirement(text: str, file: str, line: int, col: int, kind: str, group: str = "") -> Optional[Requirement]:
    """A PEP 508 requirement (``name[extras] spec ; marker`` or ``name @ url``), or a bare URL /
    VCS link / wheel path (name from ``#egg=``, the wheel file name, or the repository).  ``col`` is
    where ``text`` starts on its line.  None when ``text`` is not a requirement."""
    stripped = text.strip()
    if not stripped:
        return None
    lead = len(text) - len(text.lstrip())
    col += lead
    end_col = col + len(stripped)
    body, marker = stripped, ""
    if ";" in body:
        body, marker = body.split(";", 1)
        body, marker = body.strip(), marker.strip()
    named_url = re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*@", body)
    if not named_url and (re.match(r"^(git\+|hg\+|svn\+|bzr\+|https?://|file:|\.{0,2}/)", body) or body.endswith((".whl", ".tar.gz", ".zip"))):
        return _url_requirement(body, marker, stripped, file, line, col, end_col, kind, group)
    m = _NAME.match(body)
    if not m:
        return None
    name = m.group(0)
    rest = body[m.end():].strip()
    extras: Tuple[str, ...] = ()
    if rest.startswith("["):
        close = rest.find("]")
        if close < 0:
            return None
        extras = tuple(e.strip() for e in rest[1:close].split(",") if e.strip())
        rest = rest[close + 1:].strip()
    url = ""
    spec = ""
    if rest.startswith("@"):
        url = rest[1:].strip()
    else:
        spec = rest.strip().strip("()").strip()
        if spec and not re.match(r"^(===|==|~=|!=|>=|<=|>|<)", spec):
            return None  # not a requirement ("foo bar")
    req = Requirement(name, normalize(name), file, line, col, end_col, stripped, kind, spec=spec, extras=extras, marker=marker, url=url, group=group)
    _pin_of(req)
    if url:
        _version_from_url(req)
    return req


def _take_local(req: Requirement, v: str) -> str:
    """Set ``req.local`` from the local label in ``v`` (``2.1.0+cu121`` -> ``cu121``); ``v`` without it."""
    lm = _LOCAL.search(v)
    if lm:
        req.local = lm.group(1)
        return v[: lm.start()]
    return v


def _pin_of(req: Requirement) -> None:
    m = re.match(r"^\s*===?\s*([^\s,;]+)\s*$", req.spec)
    if m:
        v = _take_local(req, m.group(1))
        if "*" not in v:
            req.version = v
    else:
        _take_local(req, req.spec)


def _version_from_url(req: Requirement) -> None:
    base = req.url.split("#")[0].split("?")[0].rsplit("/", 1)[-1].replace("%2B", "+").replace("%2b", "+")
    m = re.match(r"^([A-Za-z0-9_.]+?)-(\d[\w.!]*(?:\+[\w.]+)?)-.*\.whl$", base) or re.match(r"^([A-Za-z0-9_.-]+?)-(\d[\w.!]*(?:\+[\w.]+)?)\.(?:tar\.gz|zip)$", base)
    if m:
        req.version = _take_local(req, m.group(2))


def _url_requirement(body, marker, stripped, file, line, col, end_col, kind, group) -> Optional[Requirement]:
    url = body
    name = ""
    egg = re.search(r"[#&]egg=([A-Za-z0-9._-]+)", url)
    if egg:
        name = egg.group(1)
    else:
        base = url.split("#")[0].split("?")[0].rstrip("/").rsplit("/", 1)[-1]
        wm = re.match(r"^([A-Za-z0-9_.]+?)-\d", base)
        if wm and base.endswith((".whl", ".tar.gz", ".zip")):
            name = wm.group(1)
        else:
            name = re.sub(r"\.git$", "", base.split("@")[0]) or base
    if not _NAME.fullmatch(name or ""):
        return None
    req = Requirement(name, normalize(name), file, line, col, end_col, stripped, kind, marker=marker, url=url, group=group)
    _version_from_url(req)
    return req


# ----------------------------------------------------------------------------- requirements files
def _read(path: str) -> Tuple[Optional[str], Optional[str]]:
    try:
        if os.path.getsize(path) > MAX_BYTES:
            return None, f"larger than {MAX_BYTES // (1024 * 1024)} MB; not read"
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return None, f"cannot read ({exc.strerror or exc})"
    text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, None


def _open(path: str, display: str, kind: str) -> DepFile:
    """A :class:`DepFile` with the file's text, or with its ``problem`` when it cannot be read."""
    df = DepFile(display, kind)
    text, problem = _read(path)
    if text is None:
        df.problem = problem
    else:
        df.text = text
    return df


def _open_toml(path: str, display: str, kind: str) -> Tuple[DepFile, Optional[dict]]:
    """:func:`_open` and the parsed TOML document (None with ``problem`` set when unreadable / invalid)."""
    df = _open(path, display, kind)
    if df.problem:
        return df, None
    try:
        return df, tomllib.loads(df.text)
    except tomllib.TOMLDecodeError as exc:
        df.problem = f"not valid TOML ({exc}); its dependencies were not audited"
        return df, None


def split_lines(text: str) -> List[str]:
    """Lines without their endings (CRLF, CR, LF)."""
    return re.split(r"\r\n|\r|\n", text)


def _strip_comment(s: str) -> str:
    """pip: a comment starts at ``#`` at the line start or after whitespace."""
    if s.lstrip().startswith("#"):
        return ""
    m = re.search(r"\s#", s)
    return s[: m.start()] if m else s




def read_requirements(path: str, display: str, _seen: Optional[set] = None, origin: str = "", constraint: bool = False) -> List[DepFile]:
    """The requirements file at ``path`` and every file it includes with ``-r``/``-c`` (paths
    relative to the including file), each as a :class:`DepFile`; ``display`` is how ``path`` is
    shown.  A missing include is a note on the ``-r`` line."""
    seen = _seen if _seen is not None else set()
    real = os.path.realpath(path)
    if real in seen or len(seen) >= MAX_INCLUDES:
        return []
    seen.add(real)
    df = DepFile(display, "requirements", constraint=constraint or os.path.basename(path).lower().startswith("constraints"))
    text, problem = _read(path)
    if text is None:
        df.problem = problem
        return [df]
    df.text = text
    out = [df]
    lines = split_lines(text)
    i = 0
    while i < len(lines):
        lineno = i + 1
        s = lines[i]
        # continuation lines (trailing backslash) join into the first line's requirement
        while s.endswith("\\") and i + 1 < len(lines):
            i += 1
            s = s[:-1] + " " + lines[i].strip()
        i += 1
        s = _strip_comment(s)
        if not s.strip():
            continue
        st = s.strip()
        col0 = len(s) - len(s.lstrip())
        if st.startswith("-"):
            opt, val, vcol = _option(s)
            if opt in ("-r", "--requirement", "-c", "--constraint"):
                if not val:
                    continue
                inc = os.path.join(os.path.dirname(path), val)
                inc_display = os.path.normpath(os.path.join(os.path.dirname(display), val))
                df.includes.append(inc_display)
                if not os.path.isfile(inc):
                    df.notes.append((lineno, vcol, f"{opt} {val}: no such file; its requirements were not audited"))
                    continue
                out.extend(read_requirements(inc, inc_display, seen, display, constraint=opt in ("-c", "--constraint") or df.constraint))
            elif opt in ("-i", "--index-url", "--extra-index-url", "-f", "--find-links"):
                if val:
                    long = {"-i": "--index-url", "-f": "--find-links"}.get(opt, opt)
                    df.indexes.append(IndexUrl(val, display, lineno, vcol, vcol + len(val), long))
            elif opt in ("-e", "--editable") and val:
                req = parse_requirement(val, display, lineno, vcol, "requirements")
                if req is not None:
                    req.origin = origin
                    df.requirements.append(req)
            continue
        # per-requirement options (--hash=..., --global-option) end the requirement text
        req_text = re.split(r"\s--?[A-Za-z]", " " + st, maxsplit=1)[0][1:]
        req = parse_requirement(req_text, display, lineno, col0, "requirements")
        if req is not None:
            req.origin = origin
            df.requirements.append(req)
    return out


def _option(s: str) -> Tuple[str, str, int]:
    """(option, value, value column) of an option line (``-r file``, ``--index-url=URL``, ``-rfile``)."""
    st = s.lstrip()
    base = len(s) - len(st)
    m = re.match(r"^(--[A-Za-z-]+|-[A-Za-z])(?:\s*=\s*|\s+)?(\S*)", st)
    if not m:
        return st, "", base
    opt, val = m.group(1), m.group(2)
    if not val and len(opt) > 2 and not opt.startswith("--"):
        opt, val = opt[:2], opt[2:]
    vcol = base + (m.start(2) if val else len(st))
    return opt, val, vcol


# ----------------------------------------------------------------------------- TOML helpers
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


def _toml_tables(lines: List[str]) -> List[Tuple[str, int, int]]:
    """(table name, first line index, end line index exclusive) for each ``[table]`` header."""
    heads = []
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if m:
            name = ".".join(p.strip().strip("\"'") for p in m.group(1).split("."))
            heads.append((name, i))
    out = []
    for k, (name, i) in enumerate(heads):
        end = heads[k + 1][1] if k + 1 < len(heads) else len(lines)
        out.append((name, i, end))
    return out


_STRING = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'")


def _strings_in(lines: List[str], start: int, end: int) -> List[Tuple[str, int, int, int]]:
    """(value, line index, col of the opening quote, col after the closing quote) of each
    one-line string literal in lines[start:end], comments skipped."""
    out = []
    for i in range(start, end):
        line = lines[i]
        pos = 0
        while True:
            m = _STRING.search(line, pos)
            hash_at = line.find("#", pos)
            if m is None:
                break
            if 0 <= hash_at < m.start():
                break
            raw = m.group(0)
            val = raw[1:-1]
            if raw[0] == '"':
                try:
                    val = ast.literal_eval(raw)
                except (ValueError, SyntaxError):
                    pass
            out.append((val, i, m.start(), m.end()))
            pos = m.end()
    return out


def _key_line(lines: List[str], start: int, end: int, key: str) -> Optional[Tuple[int, int]]:
    """(line index, col) of ``key = ...`` in lines[start:end] (key compared normalized)."""
    for i in range(start, end):
        m = re.match(r"^(\s*)([\"']?)([A-Za-z0-9._-]+)\2\s*=", lines[i])
        if m and normalize(m.group(3)) == normalize(key):
            return i, len(m.group(1))
    return None


def _locate(values: List[str], lines: List[str], start: int, end: int, file: str, kind: str, group: str) -> List[Requirement]:
    strings = _strings_in(lines, start, end)
    used: set = set()
    out = []
    for v in values:
        if not isinstance(v, str):
            continue
        hit = next((s for s in strings if s[0] == v and (s[1], s[2]) not in used), None)
        if hit is None:
            line, col = start + 1, 0
        else:
            used.add((hit[1], hit[2]))
            line, col = hit[1] + 1, hit[2] + 1
        req = parse_requirement(v, file, line, col, kind, group)
        if req is not None:
            out.append(req)
    return out


def _table_range(tables, name: str) -> Optional[Tuple[int, int]]:
    for n, s, e in tables:
        if n == name:
            return s, e
    return None


def read_pyproject(path: str, display: str) -> DepFile:
    df, doc = _open_toml(path, display, "pyproject")
    if doc is None:
        return df
    text = df.text
    lines = split_lines(text)
    tables = _toml_tables(lines)
    proj = doc.get("project") if isinstance(doc.get("project"), dict) else {}
    rng = _table_range(tables, "project")
    if rng and isinstance(proj.get("dependencies"), list):
        kl = _key_line(lines, rng[0], rng[1], "dependencies")
        s = kl[0] if kl else rng[0]
        df.requirements += _locate(proj["dependencies"], lines, s, rng[1], display, "pep621", "")
    opt = proj.get("optional-dependencies")
    if isinstance(opt, dict):
        orng = _table_range(tables, "project.optional-dependencies")
        for group, vals in opt.items():
            if not isinstance(vals, list):
                continue
            if orng:
                kl = _key_line(lines, orng[0], orng[1], group)
                s, e = (kl[0], orng[1]) if kl else orng
            elif rng:
                s, e = rng
            else:
                s, e = 0, len(lines)
            df.requirements += _locate(vals, lines, s, e, display, "pep621", group)
    poetry = (doc.get("tool") or {}).get("poetry") if isinstance(doc.get("tool"), dict) else None
    if isinstance(poetry, dict):
        groups = [("", "tool.poetry.dependencies", poetry.get("dependencies")), ("dev", "tool.poetry.dev-dependencies", poetry.get("dev-dependencies"))]
        for g, body in (poetry.get("group") or {}).items() if isinstance(poetry.get("group"), dict) else []:
            if isinstance(body, dict):
                groups.append((g, f"tool.poetry.group.{g}.dependencies", body.get("dependencies")))
        for g, tname, table in groups:
            if isinstance(table, dict):
                df.requirements += _table_requirements(table, lines, tables, tname, display, "poetry", g)
        for src in poetry.get("source") or [] if isinstance(poetry.get("source"), list) else []:
            if isinstance(src, dict) and isinstance(src.get("url"), str):
                df.indexes.append(_find_url(src["url"], lines, display, "poetry-source"))
    return df


def _find_url(url: str, lines: List[str], display: str, option: str) -> IndexUrl:
    for i, line in enumerate(lines):
        c = line.find(url)
        if c >= 0:
            return IndexUrl(url, display, i + 1, c, c + len(url), option)
    return IndexUrl(url, display, 1, 0, 0, option)


def _table_requirements(table: dict, lines, tables, tname: str, display: str, kind: str, group: str) -> List[Requirement]:
    """Poetry / Pipfile tables: ``name = "spec"`` or ``name = {version = "spec", ...}``."""
    rng = _table_range(tables, tname)
    out = []
    for name, val in table.items():
        if normalize(name) == "python":
            continue
        spec, url, markers, extras = "", "", "", ()
        if isinstance(val, str):
            spec = val
        elif isinstance(val, dict):
            spec = str(val.get("version", "") or "")
            url = str(val.get("url") or val.get("git") or val.get("path") or "")
            markers = str(val.get("markers", "") or "")
            extras = tuple(val.get("extras") or ())
        elif isinstance(val, list):
            spec = ""  # multiple constraints
        kl = _key_line(lines, rng[0], rng[1], name) if rng else None
        line, col = (kl[0] + 1, kl[1]) if kl else ((rng[0] + 1) if rng else 1, 0)
        text = lines[line - 1].strip() if 0 < line <= len(lines) else name
        req = Requirement(name, normalize(name), display, line, col, col + len(text), text, kind, spec=spec.strip(),
                          extras=extras, marker=markers, url=url, group=group)
        _poetry_pin(req)
        out.append(req)
    return out


def _poetry_pin(req: Requirement) -> None:
    s = req.spec.strip()
    if s in ("", "*"):
        return
    m = re.match(r"^(?:===?\s*)?(\d[\w.!]*(?:\+[\w.]+)?)$", s)
    if m:
        req.version = _take_local(req, m.group(1))
    else:
        _take_local(req, s)


def read_pipfile(path: str, display: str) -> DepFile:
    df, doc = _open_toml(path, display, "pipfile")
    if doc is None:
        return df
    text = df.text
    lines = split_lines(text)
    tables = _toml_tables(lines)
    for tname, group in (("packages", ""), ("dev-packages", "dev")):
        if isinstance(doc.get(tname), dict):
            df.requirements += _table_requirements(doc[tname], lines, tables, tname, display, "pipfile", group)
    for src in doc.get("source") or [] if isinstance(doc.get("source"), list) else []:
        if isinstance(src, dict) and isinstance(src.get("url"), str):
            df.indexes.append(_find_url(src["url"], lines, display, "pipfile-source"))
    return df


# ----------------------------------------------------------------------------- setup.py / setup.cfg
def read_setup_py(path: str, display: str) -> DepFile:
    """``install_requires`` / ``extras_require`` of the ``setup(...)`` call, read with ``ast``
    (never executed).  A literal list (or a module-level name bound to one) is read; anything
    else (a function call, a comprehension, reading a file) is a note on its line."""
    df = _open(path, display, "setup.py")
    if df.problem:
        return df
    text = df.text
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        df.problem = f"cannot be parsed ({exc.__class__.__name__}); its dependencies were not audited"
        return df
    lines = split_lines(text)
    assigns: Dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigns[node.targets[0].id] = node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
            for elt in node.targets[0].elts:  # `reqs, extra = read("requirements.txt")`: each name came from that value
                if isinstance(elt, ast.Name):
                    assigns.setdefault(elt.id, node.value)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _call_name(node.func) in ("setup", "setuptools.setup")):
            continue
        for kw in node.keywords:
            if kw.arg == "install_requires":
                df.requirements += _literal_list(kw.value, assigns, lines, display, df, "install_requires", "", os.path.dirname(path))
            elif kw.arg == "extras_require":
                val = kw.value
                if isinstance(val, ast.Name) and isinstance(assigns.get(val.id), ast.Dict):
                    val = assigns[val.id]
                if isinstance(val, ast.Dict):
                    for k, v in zip(val.keys, val.values):
                        group = k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else "?"
                        df.requirements += _literal_list(v, assigns, lines, display, df, f"extras_require[{group!r}]", group, os.path.dirname(path))
                else:
                    df.notes.append((val.lineno, val.col_offset, "extras_require is not a literal dict; its requirements were not audited"))
    return df


def _call_name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return ""


def _literal_list(val: ast.AST, assigns, lines, display, df: DepFile, what: str, group: str, folder: str = "") -> List[Requirement]:
    if isinstance(val, ast.Name) and isinstance(assigns.get(val.id), (ast.List, ast.Tuple)):
        val = assigns[val.id]
    if not isinstance(val, (ast.List, ast.Tuple)):
        # read from a requirements file next to setup.py (`install_requires=read("requirements.txt")`): that file is audited itself
        named = [n.value for n in ast.walk(assigns.get(val.id, val) if isinstance(val, ast.Name) else val)
                 if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.endswith((".txt", ".in"))]
        if named and all(os.path.isfile(os.path.join(folder, n)) and is_dependency_file(os.path.join(folder, n)) for n in named):
            return []
        expr = (ast.get_source_segment("\n".join(lines), val) or type(val).__name__).split("\n")[0][:60]
        df.notes.append((val.lineno, _char_col(lines, val.lineno, val.col_offset),
                         f"{what}={expr} is not a literal list: setup.py is not run, so these requirements were not audited here "
                         "(requirements files next to it are audited on their own)"))
        return []
    out = []
    for elt in val.elts:
        if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
            line = elt.lineno
            col = _char_col(lines, line, elt.col_offset) + 1
            req = parse_requirement(elt.value, display, line, col, "setup.py", group)
            if req is not None:
                out.append(req)
        else:
            df.notes.append((elt.lineno, elt.col_offset, f"an entry of {what} is not a string literal; it was not audited"))
    return out


def _char_col(lines: List[str], line: int, byte_col: int) -> int:
    if 0 < line <= len(lines):
        return len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "replace"))
    return byte_col


def read_setup_cfg(path: str, display: str) -> DepFile:
    """``[options] install_requires`` and ``[options.extras_require]`` (INI continuation lines)."""
    df = _open(path, display, "setup.cfg")
    if df.problem:
        return df
    text = df.text
    lines = split_lines(text)
    section = ""
    key = None
    for i, line in enumerate(lines):
        m = re.match(r"^\s*\[([^\]]+)\]\s*$", line)
        if m:
            section, key = m.group(1).strip(), None
            continue
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        km = re.match(r"^([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)$", line)
        if km and not line[0].isspace():
            key = km.group(1)
            value, vcol = km.group(2), km.start(2)
            if not value.strip():
                continue
        elif key is not None and line[0].isspace():
            value, vcol = line, 0
        else:
            continue
        group = ""
        if section == "options" and key == "install_requires":
            pass
        elif section == "options.extras_require":
            group = key or ""
        else:
            continue
        value = _strip_comment(value)
        if value.strip().startswith(("file:", "attr:")):
            df.notes.append((i + 1, vcol, f"{key} = {value.strip()} is not read; list the requirements literally"))
            continue
        req = parse_requirement(value, display, i + 1, vcol, "setup.cfg", group)
        if req is not None:
            df.requirements.append(req)
    return df


# ----------------------------------------------------------------------------- environment.yml
def read_environment_yml(path: str, display: str) -> DepFile:
    """conda ``dependencies`` (``name``, ``name=ver``, ``name=ver=build``, ``channel::name``),
    ``channels``, and the ``- pip:`` sub-list (PEP 508 lines); read line by line (no YAML library)."""
    df = _open(path, display, "conda")
    if df.problem:
        return df
    text = df.text
    lines = split_lines(text)
    block = ""
    pip_indent: Optional[int] = None
    for i, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            block = line.split(":")[0].strip()
            pip_indent = None
            continue
        m = re.match(r"^(\s*)-\s+(.*?)\s*$", _strip_comment(line))
        if not m:
            continue
        item_col = m.start(2)
        item = m.group(2)
        unq = item.strip("'\"")
        qoff = item_col + (1 if item[:1] in "'\"" else 0)
        if pip_indent is not None and len(m.group(1)) > pip_indent:
            if unq.startswith("-"):  # pip options inside the pip: list
                opt, val, vcol = _option(" " * qoff + unq)
                if opt in ("-i", "--index-url", "--extra-index-url", "-f", "--find-links") and val:
                    long = {"-i": "--index-url", "-f": "--find-links"}.get(opt, opt)
                    df.indexes.append(IndexUrl(val, display, i + 1, vcol, vcol + len(val), long))
                elif opt in ("-e", "--editable") and val:
                    req = parse_requirement(val, display, i + 1, vcol, "conda-pip")
                    if req is not None:
                        df.requirements.append(req)
                continue
            req = parse_requirement(unq, display, i + 1, qoff, "conda-pip")
            if req is not None:
                df.requirements.append(req)
            continue
        pip_indent = None
        if block == "channels":
            df.indexes.append(IndexUrl(unq, display, i + 1, qoff, qoff + len(unq), "conda-channel"))
            continue
        if block != "dependencies":
            continue
        if re.match(r"^pip\s*:", unq):
            pip_indent = len(m.group(1))
            continue
        req = _conda_requirement(unq, display, i + 1, qoff)
        if req is not None:
            df.requirements.append(req)
    return df


def _conda_requirement(item: str, file: str, line: int, col: int) -> Optional[Requirement]:
    channel = ""
    body = item
    if "::" in body:
        channel, body = body.split("::", 1)
    m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$", body)
    if not m:
        return None
    name, rest = m.group(1), m.group(2).replace(" ", "")
    req = Requirement(name, normalize(name), file, line, col, col + len(item), item, "conda", spec=rest)
    parts = rest.split("=") if rest.startswith("=") and not rest.startswith("==") else None
    if rest.startswith("=="):
        v = rest[2:].split("=")[0]
        req.version = v if v and "*" not in v else None
        req.build = rest[2:].split("=", 1)[1] if "=" in rest[2:] else ""
    elif parts is not None:
        # =2.1.0 / =2.1.0=build ; =2.1 means 2.1.*
        v = parts[1] if len(parts) > 1 else ""
        req.build = parts[2] if len(parts) > 2 else ""
        if v and "*" not in v and v.count(".") >= 2:
            req.version = v
    elif re.match(r"^\d", rest):
        sp = rest.split("=")
        req.version = sp[0] if sp[0].count(".") >= 2 and "*" not in sp[0] else None
        req.build = sp[1] if len(sp) > 1 else ""
    if channel:
        req.url = ""
        req.group = channel
    return req


# ----------------------------------------------------------------------------- discovery
_REQ_NAME = re.compile(r"^(requirements|constraints)[\w.-]*\.(txt|in)$", re.I)
TOML_READERS = {"pyproject.toml": read_pyproject, "pipfile": read_pipfile}
OTHER_READERS = {"setup.py": read_setup_py, "setup.cfg": read_setup_cfg, "environment.yml": read_environment_yml,
                 "environment.yaml": read_environment_yml}


def is_dependency_file(path: str) -> bool:
    """Is ``path`` a file the audit reads (by name: requirements*/constraints* .txt/.in, also
    inside a ``requirements/`` folder; pyproject.toml, setup.py, setup.cfg, environment.yml, Pipfile)."""
    base = os.path.basename(path)
    low = base.lower()
    if _REQ_NAME.match(low):
        return True
    if os.path.basename(os.path.dirname(path)).lower() == "requirements" and low.endswith((".txt", ".in")):
        return True
    if low in TOML_READERS or low in OTHER_READERS:
        return True
    return bool(re.match(r"^(environment|conda)[\w.-]*\.ya?ml$", low))


def read_file(path: str, display: str, seen: Optional[set] = None) -> List[DepFile]:
    """Read one dependency file (and, for requirements files, its includes)."""
    low = os.path.basename(path).lower()
    if low in TOML_READERS:
        return [TOML_READERS[low](path, display)]
    if low in OTHER_READERS:
        return [OTHER_READERS[low](path, display)]
    if low.startswith(("environment", "conda")) and low.endswith((".yml", ".yaml")):
        return [read_environment_yml(path, display)]
    return read_requirements(path, display, seen)
