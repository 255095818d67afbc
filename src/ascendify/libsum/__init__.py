"""Library summaries: what the public functions and classes of training libraries do on CUDA.

The data (``data/<package>.json.gz``, one section per release, and ``data/index.json``) is made
by ``tools/libsum.py --all`` from the PyPI releases named there (file, URL and sha256 per
release).  This module loads it lazily: :func:`for_module` reads ``index.json`` once and a
library's file only when a project imports that library.

The release is chosen per project: the version the project pins (``==`` in its requirements /
pyproject / setup files, read with :mod:`ascendify.deps`) when it is summarised, else the newest
summarised release not above the pin, else (a pin older than all) the oldest summarised, else
(no pin) the newest; :attr:`Summary.how` says which, for the message.
"""

from __future__ import annotations

import gzip
import json
import os
from functools import lru_cache
from importlib import resources
from typing import Dict, Optional, Tuple

from ascendify.deps.parse import is_dependency_file, normalize, read_file


def _data(name: str) -> bytes:
    return resources.files("ascendify.libsum").joinpath("data").joinpath(name).read_bytes()


@lru_cache(maxsize=1)
def index() -> dict:
    """package -> {"modules", "data", "versions": {version: {file, url, sha256, entries}}}."""
    d = json.loads(_data("index.json").decode("utf-8"))
    d.pop("_about", None)
    return d


@lru_cache(maxsize=1)
def module_packages() -> Dict[str, str]:
    """top-level module name -> PyPI package (``flash_attn`` -> ``flash-attn``)."""
    return {m: pkg for pkg, info in index().items() for m in info["modules"]}


@lru_cache(maxsize=1)
def noop_without_cuda() -> frozenset:
    """torch.cuda calls that do nothing on a host without CUDA (``sources.toml``; not CUDA work)."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore
    return frozenset(tomllib.loads(_data("sources.toml").decode("utf-8")).get("noop_without_cuda", ()))


LOADED: list = []
"""Packages whose data file has been read in this process (tests check the laziness)."""


@lru_cache(maxsize=None)
def load(package: str) -> dict:
    """The whole data of one package (all its summarised releases)."""
    LOADED.append(package)
    return json.loads(gzip.decompress(_data(index()[package]["data"])).decode("utf-8"))


def vkey(v: str) -> tuple:
    out = []
    for part in v.replace("-", ".").split("."):
        num = "".join(ch for ch in part if ch.isdigit())
        out.append((int(num) if num and part[: len(num)] == num else -1, part))
    return tuple(out)


def choose(package: str, pinned: Optional[str]) -> Tuple[str, str]:
    """(summarised release, how it was chosen) for a project that pins ``pinned`` (or None)."""
    versions = sorted(index()[package]["versions"], key=vkey)
    newest = versions[-1]
    if pinned is None:
        return newest, f"{package} {newest}, the newest release summarised (the project pins no version)"
    if pinned in versions:
        return pinned, f"{package} {pinned}, the release the project pins"
    below = [v for v in versions if vkey(v) <= vkey(pinned)]
    if below:
        return below[-1], f"{package} {below[-1]}, the nearest summarised release below the pinned {pinned}"
    oldest = versions[0]
    return oldest, f"{package} {oldest}, the oldest release summarised (the pinned {pinned} is older than any summarised)"


class Summary:
    """One release of one library: ``entry(qualname)`` resolves the public names users import."""

    def __init__(self, package: str, version: str, how: str, section: dict):
        self.package = package
        self.version = version
        self.how = how
        self.url = section["url"]
        self.sha256 = section["sha256"]
        self.entries: dict = section["entries"]
        self.aliases: dict = section["aliases"]
        self.bases: dict = section["bases"]
        self.advice: list = section["advice"]
        self._owners: Optional[frozenset] = None

    def canonical(self, qual: str) -> str:
        if qual in self.entries:
            return qual
        got = self.aliases.get(qual)
        if got is not None:
            return got
        head, _, last = qual.rpartition(".")  # pkg.Class.method where pkg.Class is re-exported
        if head and head in self.aliases:
            return f"{self.aliases[head]}.{last}"
        return qual

    def entry(self, qual: str) -> Optional[Tuple[str, dict]]:
        """(defining qualname, entry) for a function/class/method, or None when it does no CUDA work."""
        q = self.canonical(qual)
        e = self.entries.get(q)
        return (q, e) if e is not None else None

    def method(self, cls: str, name: str) -> Optional[Tuple[str, dict]]:
        """The entry of ``cls.name``, looked up through the library's base classes (None if none)."""
        seen: set = set()
        todo = [self.canonical(cls)]
        while todo:
            c = todo.pop(0)
            if c in seen or len(seen) > 50:
                continue
            seen.add(c)
            e = self.entries.get(f"{c}.{name}")
            if e is not None:
                return f"{c}.{name}", e
            todo.extend(self.bases.get(c, ()))
        return None

    def is_class(self, qual: str) -> bool:
        """Is ``qual`` a library class the summary knows (an entry, a base list, or methods with entries)?"""
        q = self.canonical(qual)
        if self._owners is None:
            self._owners = frozenset(k.rsplit(".", 1)[0] for k, e in self.entries.items() if e["kind"] == "method")
        return q in self.bases or q in self._owners or (self.entries.get(q) or {}).get("kind") == "class"


@lru_cache(maxsize=None)
def summary(package: str, version: str, how: str) -> Summary:
    return Summary(package, version, how, load(package)["versions"][version])


def for_module(module: str, pins: Optional[Dict[str, str]] = None) -> Optional[Summary]:
    """The summary of the library that provides top-level module ``module`` (None when not
    summarised), in the release ``pins`` (normalised package name -> version) selects."""
    pkg = module_packages().get(module.split(".")[0])
    if pkg is None:
        return None
    version, how = choose(pkg, (pins or {}).get(normalize(pkg)))
    return summary(pkg, version, how)


# ------------------------------------------------------------------ project pins
_PIN_FILES_CACHE: Dict[str, Dict[str, str]] = {}


def project_pins(path: str) -> Dict[str, str]:
    """Exact pins (``pkg==X``) of the project a file belongs to: the dependency files of the nearest
    folder at or above the file's folder that has any (read with :mod:`ascendify.deps`)."""
    d = os.path.dirname(os.path.abspath(path))
    walked = []
    pins: Optional[Dict[str, str]] = None
    for _ in range(12):
        if d in _PIN_FILES_CACHE:
            pins = _PIN_FILES_CACHE[d]
            break
        walked.append(d)
        found = _pins_in(d)
        if found is not None:
            pins = found
            break
        up = os.path.dirname(d)
        if up == d:
            break
        d = up
    pins = pins or {}
    for w in walked:
        _PIN_FILES_CACHE[w] = pins
    return pins


def _pins_in(folder: str) -> Optional[Dict[str, str]]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    files = [os.path.join(folder, n) for n in names if is_dependency_file(os.path.join(folder, n))]
    if not files:
        return None
    pins: Dict[str, str] = {}
    for f in files:
        try:
            dfs = read_file(f, f)
        except Exception:  # a file the audit cannot read gives no pins here; the audit reports it
            continue
        for df in dfs:
            for r in df.requirements:
                if r.version and r.key not in pins:
                    pins[r.key] = r.version
    return pins
