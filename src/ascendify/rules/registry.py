"""Rule metadata (from ``rules/data/*.toml``) and the registry of check functions.

Each rule is documented in data, like ruff's rule pages: what it finds, why it
matters on NPU, an example, the fix, and the source of the NPU fact.  The check
that implements a rule is a function registered with :func:`check` (called
for each AST node of the given types) or :func:`file_check` (called once per
file, after the walk).
"""

from __future__ import annotations

import ast
import hashlib
import sys
from dataclasses import dataclass
from functools import lru_cache
import re
from importlib import resources
from typing import Any, Callable, Iterable, Optional, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ascendify import __version__

CATEGORIES = {
    "SYN": "parse",
    "DEV": "device",
    "IMP": "torch_npu-import",
    "DST": "distributed",
    "AMP": "amp",
    "DTY": "dtype",
    "OPS": "operators",
    "DYN": "dynamic-shapes",
    "MEM": "memory",
    "EXT": "third-party",
    "CMP": "compile",
    "DEP": "dependencies",
}
"""Code prefix → category name.  A rule's code is its prefix plus three digits."""

FIELDS = ("code", "name", "severity", "message", "summary", "why", "example", "fix", "source")


@dataclass(frozen=True)
class Rule:
    """One rule's page.

    ``fixable`` is ``"safe"``, ``"unsafe"`` or ``""`` (no automatic fix).
    ``verified`` is False when the NPU fact behind the rule is not confirmed
    by a cited public source (the page then says so).
    """

    code: str
    name: str
    severity: str
    message: str
    summary: str
    why: str
    example: str
    fix: str
    source: str
    fixable: str = ""
    verified: bool = True
    fixed_example: str = ""
    file_suffixes: tuple = ()  # a file-kind rule: reported once for each scanned file with one of these suffixes
    project: bool = False  # reported by the project pass only (a project check, or the dependency audit), not by a file check
    cross_file: bool = False  # a project check (rules/checks/project.py) reports it across modules, from the module summaries
    message_agnostic: str = ""  # the message for --target agnostic where the fix differs (names the device-agnostic API)
    provenance: str = ""  # the research notes a source came through ("[see also …]" in the data): for maintainers, never rendered
    policy: tuple = ()  # the fix policies that apply to its findings (names in semantic.policy.POLICIES); default: its file's `policy`
    work: Union[bool, str] = False  # its error/silent findings are CUDA/NCCL work the enclosing helper does (its callers in other
    # modules get DEV026); "param-default": only at a parameter's default (``device="cuda"``); default: its file's `work`
    builds_cuda: Union[bool, str] = False  # its finding marks CUDA code the project builds (an extension, a Triton kernel);
    # "import": also the file's import of a CUDA kernel library (cupy), for a kernel object whose build has no finding

    def __post_init__(self) -> None:
        object.__setattr__(self, "file_suffixes", tuple(self.file_suffixes))
        object.__setattr__(self, "policy", (self.policy,) if isinstance(self.policy, str) else tuple(self.policy))

    def message_for(self, target: str) -> str:
        """The message template for ``target`` (``npu`` / ``agnostic``)."""
        return self.message_agnostic if target == "agnostic" and self.message_agnostic else self.message

    @property
    def prefix(self) -> str:
        return self.code[:3]

    @property
    def category(self) -> str:
        return CATEGORIES[self.prefix]


_SEE_ALSO = re.compile(r"\s*\[see also ([^\]]*)\]")


def split_provenance(source: str) -> "tuple[str, str]":
    """``source`` without its ``[see also NOTE]`` tags (the research notes a fact came through,
    which users do not have), and those notes joined by ``; ``."""
    notes = _SEE_ALSO.findall(source)
    return _SEE_ALSO.sub("", source).strip(), "; ".join(n.strip() for n in notes)


@lru_cache(maxsize=1)
def load_rules() -> dict[str, Rule]:
    """All rules, keyed by code, in code order.  Raises ``ValueError`` on bad data."""
    rules: dict[str, Rule] = {}
    data_dir = resources.files("ascendify.rules").joinpath("data")
    for entry in sorted(data_dir.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".toml"):
            continue
        doc = tomllib.loads(entry.read_text(encoding="utf-8"))
        file_policy = doc.get("policy", [])  # the file's default fix policy for its rules
        file_work = doc.get("work", False)  # the file's default for `work` (the device categories: true)
        for raw in doc.get("rule", []):
            missing = [f for f in FIELDS if f not in raw]
            if missing:
                raise ValueError(f"{entry.name}: rule {raw.get('code', '?')} lacks {', '.join(missing)}")
            src, notes = split_provenance(raw["source"])
            r = Rule(**{"policy": file_policy, "work": file_work, **raw, "source": src, "provenance": notes})
            if r.prefix not in CATEGORIES or len(r.code) != 6 or not r.code[3:].isdigit():
                raise ValueError(f"{entry.name}: bad rule code {r.code!r}")
            if r.code in rules:
                raise ValueError(f"{entry.name}: duplicate rule code {r.code}")
            rules[r.code] = r
    return dict(sorted(rules.items()))


@lru_cache(maxsize=1)
def ruleset_version() -> str:
    """Hash of the package version and all rule data and check sources (for the cache)."""
    h = hashlib.sha256(__version__.encode())
    for pkg in ("ascendify.rules.data", "ascendify.rules.checks"):
        base = resources.files(pkg.rsplit(".", 1)[0]).joinpath(pkg.rsplit(".", 1)[1])
        for entry in sorted(base.iterdir(), key=lambda e: e.name):
            if entry.name.endswith((".toml", ".py", ".json")):
                h.update(entry.name.encode())
                h.update(entry.read_bytes())
    for mod in ("diagnostics.py", "scan/context.py", "scan/engine.py", "scan/source.py", "libsum/__init__.py", "libsum/data/index.json", "libsum/data/sources.toml"):
        h.update(resources.files("ascendify").joinpath(mod).read_bytes())
    sem = resources.files("ascendify").joinpath("semantic")
    for entry in sorted(sem.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".py"):
            h.update(entry.name.encode())
            h.update(entry.read_bytes())
    return h.hexdigest()[:16]


NodeCheck = Callable[..., None]
NODE_CHECKS: dict[str, list[tuple[tuple[type, ...], NodeCheck, Any]]] = {}  # keys: None, a frozenset or a function of the settings
FILE_CHECKS: dict[str, list[NodeCheck]] = {}
KEYED_TYPES = (ast.Call, ast.Attribute, ast.Name, ast.keyword)
"""Node types a check can be keyed on with ``names=``: a Call by the called name
(``f`` in ``f(...)`` / ``x.f(...)``), an Attribute by its attr, a Name by its id,
a keyword by its arg.  A Name (and a Call of a Name) bound by an import is also
keyed by the last part of what it imports (``sync`` of ``from torch.cuda import
synchronize as sync`` matches ``names=("synchronize",)``)."""


def check(code: str, *node_types: type, names: "Optional[Union[Iterable[str], Callable[[Any], Iterable[str]]]]" = None) -> Callable[[NodeCheck], NodeCheck]:
    """Register ``fn(node, ctx)`` as (part of) rule ``code``'s check for these AST node types.

    With ``names``, the engine calls ``fn`` only for nodes whose key (see
    :data:`KEYED_TYPES`) is one of them — a cheap pre-filter for the hot node
    types; the check must still return early for any other key.  ``names`` may
    be a function of the settings that returns the keys (a table chosen by the
    target release or chip: the last part of each API name in it), called once
    when the engine builds its dispatch.
    """
    keys = names if names is None or callable(names) else frozenset(names)
    if keys is not None and not all(t in KEYED_TYPES for t in node_types):
        raise ValueError(f"{code}: names= works only for {', '.join(t.__name__ for t in KEYED_TYPES)}")

    def deco(fn: NodeCheck) -> NodeCheck:
        NODE_CHECKS.setdefault(code, []).append((node_types, fn, keys))
        return fn

    return deco


def last_parts(apis: Iterable[str]) -> frozenset:
    """The keys a call of one of ``apis`` has, for ``check(names=)``: the last part of each dotted
    name (a check that tests ``ctx.call_name(node) in apis`` can be keyed on these)."""
    return frozenset(a.rpartition(".")[2] for a in apis)


def file_check(code: str) -> Callable[[NodeCheck], NodeCheck]:
    """Register ``fn(ctx)`` as rule ``code``'s whole-file check (runs after the walk)."""

    def deco(fn: NodeCheck) -> NodeCheck:
        FILE_CHECKS.setdefault(code, []).append(fn)
        return fn

    return deco


PROJECT_CHECKS: dict[str, list[NodeCheck]] = {}


def project_check(code: str) -> Callable[[NodeCheck], NodeCheck]:
    """Register ``fn(ctx)`` as rule ``code``'s project check: called once per scan of two or more
    modules with a :class:`ascendify.rules.project.ProjectContext` (the facts the module summaries
    make together, the scan's findings, the settings); it returns the cross-file findings it makes.
    The rule's data says ``cross_file = true`` (and ``project = true`` where nothing else reports it);
    a check whose rule does not is not run."""

    def deco(fn: NodeCheck) -> NodeCheck:
        PROJECT_CHECKS.setdefault(code, []).append(fn)
        return fn

    return deco


_loaded = False


def load_checks() -> None:
    """Import every module in ``rules/checks`` (which registers their checks)."""
    global _loaded
    if _loaded:
        return
    import importlib
    import pkgutil

    from ascendify.rules import checks

    for info in pkgutil.iter_modules(checks.__path__):
        importlib.import_module(f"ascendify.rules.checks.{info.name}")
    _loaded = True


def get_rule(code: str) -> Optional[Rule]:
    return load_rules().get(code.upper())
