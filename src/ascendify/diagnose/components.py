"""Framework components: which framework, and which of its features, a Python traceback was raised in.

Data: ``data/components.toml`` (``[[component]]`` entries: project, a path regex, the feature in plain words,
whether the entry is a package-wide catch-all, the upstream package it must match, a workaround and a source).
:func:`of_path` reads one frame path; :class:`~ascendify.diagnose.structure.TracebackReader` keeps, per traceback,
the deepest frame with a specific component (else the deepest catch-all), and the engine words an exception no
catalogue entry explains by it: "raised inside vllm-ascend's speculative decoding", the workaround, the upgrade.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FIELDS = ("id", "project", "path", "feature", "specific", "pair", "workaround", "source")


@dataclass(frozen=True)
class Component:
    id: str
    project: str
    path: re.Pattern
    feature: str
    specific: bool
    pair: str
    workaround: str
    source: str

    def name(self) -> str:
        """``vllm-ascend's speculative decoding`` or ``vllm-ascend`` (a catch-all)."""
        return f"{self.project}'s {self.short()}" if self.feature else self.project

    def short(self) -> str:
        """The feature without its parenthesised explanation (``speculative decoding``), or the project."""
        return self.feature.split(" (", 1)[0] if self.feature else self.project

    def explanation(self) -> str:
        """The feature's parenthesised explanation (``the draft / MTP / Eagle proposer``), or ""."""
        return self.feature.split(" (", 1)[1].rstrip(")") if " (" in self.feature else ""


def parse(data: dict) -> tuple:
    out, seen = [], set()
    for raw in data.get("component", []):
        cid = raw.get("id", "?")
        for k in ("id", "project", "path", "source"):
            if not raw.get(k):
                raise ValueError(f"component {cid}: missing {k}")
        unknown = set(raw) - set(FIELDS)
        if unknown:
            raise ValueError(f"component {cid}: unknown field(s) {', '.join(sorted(unknown))}")
        if cid in seen:
            raise ValueError(f"component {cid}: duplicate id")
        if "http" not in raw["source"]:
            raise ValueError(f"component {cid}: source has no URL")
        seen.add(cid)
        out.append(Component(cid, raw["project"], re.compile(raw["path"]), " ".join(raw.get("feature", "").split()),
                             bool(raw.get("specific", True)), raw.get("pair", ""), " ".join(raw.get("workaround", "").split()),
                             raw["source"]))
    return tuple(out)


@lru_cache(maxsize=1)
def load() -> tuple:
    text = resources.files("ascendify.diagnose").joinpath("data").joinpath("components.toml").read_text(encoding="utf-8")
    return parse(tomllib.loads(text))


@lru_cache(maxsize=4096)
def of_path(path: str) -> Optional[Component]:
    """The first component (file order) whose regex finds ``path`` (backslashes read as ``/``), else None."""
    p = path.replace("\\", "/")
    if "/" not in p:
        return None
    for c in load():
        if c.path.search(p):
            return c
    return None


def short_path(comp: Component, path: str) -> str:
    """``vllm_ascend/spec_decode/eagle.py`` from ``/usr/.../site-packages/vllm_ascend/spec_decode/eagle.py``."""
    p = path.replace("\\", "/")
    m = comp.path.search(p)
    if m is None:
        return p.rsplit("/", 1)[-1]
    start = p.rfind("/", 0, m.start() + (1 if p[m.start():m.start() + 1] == "/" else 0))
    return p[start + 1:] if start >= 0 else p


def where(comp: Component, frame) -> str:
    """``vllm_ascend/device_allocator/camem.py:208, in sleep``."""
    return f"{short_path(comp, frame.path)}:{frame.line}, in {frame.function}"


def note(comp: Component, frame) -> tuple:
    """``(cause sentence, fix sentence)`` added to a finding a catalogue entry explains (an ACL / CANN code) that was
    raised inside ``comp``'s code: the feature it happened in, its workaround and the upgrade."""
    cause = f" It was raised inside {comp.name()} ({where(comp, frame)})." + explain(comp)
    fix = f" It happened in {comp.name()}. " + (comp.workaround + " " if comp.workaround else "")
    fix += (f"If it keeps happening with {comp.short()}, upgrade {comp.project} to its newest release"
            + (f" with the {comp.pair} version that release names" if comp.pair else "")
            + f" and search {comp.project}'s issues and merged pull requests for this error.")
    return cause, fix


_SITE = re.compile(r"(?:site|dist)-packages/([A-Za-z_][\w]*)/")


def drift(comp: Component, frame, callee_path: str = "") -> str:
    """The first sentence of a version-pairing fix when the failing call is in ``comp``'s code (``callee_path``: the
    deepest frame's path, whose installed package is the other side of the pair when it is another package)."""
    m = _SITE.search(callee_path.replace("\\", "/"))
    callee = m.group(1) if m else ""
    own = short_path(comp, frame.path).split("/", 1)[0]
    if callee and callee != own:
        with_what = f"the installed {callee}" + (f" (and {comp.pair})" if comp.pair and comp.pair.lower() != callee else "")
    else:
        with_what = (f"the installed {comp.pair}" if comp.pair else
                     "the packages it calls (the frames below it in the traceback name them)")
    return (f"The call that failed is in {comp.project}'s code ({where(comp, frame)}): install the {comp.project} release "
            f"that matches {with_what}, or pin that to the version the {comp.project} release names.")


def explain(comp: Component) -> str:
    """`` Speculative decoding here: the draft / MTP / Eagle proposer.`` (what the feature does), or ""."""
    e = comp.explanation()
    return f" {comp.short()[:1].upper()}{comp.short()[1:]} here: {e}." if e else ""


def reading(comp: Component, frame, exc_type: str, message: str) -> tuple:
    """``(cause, fix)`` for an exception no catalogue entry explains, raised inside ``comp``'s code at ``frame``."""
    what = comp.name()
    cause = (f"{exc_type} was raised inside {what} ({where(comp, frame)}), not in your own code. An error raised in a framework's own "
             f"code usually means that the configuration or inputs you give it "
             f"break a rule it checks (the message says which)")
    cause += (f", that the installed {comp.project} has a bug there, or that it does not match the installed {comp.pair} "
              "(its API changed between versions)." if comp.pair else f", or that the installed {comp.project} has a bug there.")
    fix = (comp.workaround + " ") if comp.workaround else ""
    if comp.pair:
        fix += (f"Upgrade {comp.project} to its newest release with the {comp.pair} version that release names "
                f"(`pip show {comp.project.lower()} {comp.pair.lower()}` shows what is installed); ")
    else:
        fix += f"Upgrade {comp.project} to its newest release; "
    fix += (f"search {comp.project}'s issues and merged pull requests for the message's own words (a fix is often "
            f"merged before it is released) and, if it is new, report it with the full traceback and versions.")
    return cause, fix
