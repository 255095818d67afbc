"""Settings: ``[tool.ascendify]`` in pyproject.toml, overridden by the command line.

Keys (kebab- or snake-case): ``select``, ``ignore``, ``per-file-ignores``
(glob → list of codes), ``exclude``, ``extend-exclude``, ``target``
(``npu`` | ``agnostic``), ``torch-npu`` (target torch_npu release, e.g.
``"2.7.1"``; without it the release is inferred from the project's pinned torch, see
``ascendify.target``), ``chip`` (a ``soc_version`` such as ``Ascend910B3``),
``fail-on`` (severity), ``unsafe-fixes`` (bool).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from typing import Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ascendify.errors import ConfigError
from ascendify.diagnostics import SEVERITIES

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", "__pycache__", "build", "dist",
    "site-packages", "node_modules", ".tox", ".nox", ".eggs", "*.egg-info", ".ipynb_checkpoints",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ascendify_cache",
)
TARGETS = ("npu", "agnostic")
OTHER_TABLES = ("fit",)
"""Sub-tables of ``[tool.ascendify]`` that other commands read (``[tool.ascendify.fit]``:
``ascendify.fit.hook``); scan's settings ignore them."""


def default_torch_npu() -> str:
    """Target torch_npu release when neither the command line, the config nor the project's
    pinned torch names one: the newest recommended stable release of the version KB, the same
    one ``ascendify doctor`` recommends (``ascendify.target``).  Read when first needed, not at
    import (start-up of every command)."""
    from ascendify.target import recommended_release

    return recommended_release()


@dataclass
class Settings:
    """Everything that changes what a scan or fix does."""

    select: list = field(default_factory=list)
    ignore: list = field(default_factory=list)
    per_file_ignores: dict = field(default_factory=dict)
    exclude: list = field(default_factory=lambda: list(DEFAULT_EXCLUDES))
    extend_exclude: list = field(default_factory=list)
    target: str = "npu"
    torch_npu: str = field(default_factory=default_torch_npu)
    torch_npu_reason: str = ""
    """Why this release ("from requirements.txt: torch==2.1.0"); empty until decided."""
    torch_npu_requested: str = ""
    """The release asked for when the KB has no release of it and ``torch_npu`` is the known one used
    instead (``--torch-npu 9.9.9`` -> ``2.14.0``, ``2.7`` -> ``2.7.1.post11``); empty otherwise."""
    chip: Optional[str] = None
    fail_on: str = "error"
    unsafe_fixes: bool = False
    config_file: Optional[str] = None

    def validate(self) -> "Settings":
        src = self.config_file or "command line"
        if self.target not in TARGETS:
            raise ConfigError(f"{src}: target must be one of {', '.join(TARGETS)}, not {self.target!r}")
        if self.fail_on not in SEVERITIES + ("never",):
            raise ConfigError(f"{src}: fail-on must be one of {', '.join(SEVERITIES)} or never, not {self.fail_on!r}")
        for name in ("select", "ignore", "exclude", "extend_exclude"):
            val = getattr(self, name)
            if not isinstance(val, list) or not all(isinstance(v, str) for v in val):
                raise ConfigError(f"{src}: {name.replace('_', '-')} must be a list of strings")
        if not isinstance(self.per_file_ignores, dict):
            raise ConfigError(f"{src}: per-file-ignores must be a table of glob = [codes]")
        self.select = [c.strip().upper() for c in self.select if c.strip()]
        self.ignore = [c.strip().upper() for c in self.ignore if c.strip()]
        return self

    # ------------------------------------------------------------------ rules
    def enabled(self, code: str, rel_path: str = "") -> bool:
        """Is rule ``code`` on for a file?  The longest matching prefix wins (as in ruff);
        ``ALL`` selects everything; no ``select`` means all rules."""
        sel = max((len(p) for p in self.select if p == "ALL" or code.startswith(p)), default=-1 if self.select else 0)
        if sel < 0:
            return False
        ign = max((len(p) for p in self.ignore if p == "ALL" or code.startswith(p)), default=-1)
        if ign >= 0 and ign >= sel:
            return False
        if rel_path:
            for pattern, codes in self.per_file_ignores.items():
                if _glob_match(rel_path, pattern) and any(code.startswith(c.upper()) or c.upper() == "ALL" for c in codes):
                    return False
        return True

    def is_excluded(self, rel_path: str) -> bool:
        parts = rel_path.replace(os.sep, "/").split("/")
        for pattern in self.exclude + self.extend_exclude:
            if "/" in pattern:
                if _glob_match(rel_path, pattern):
                    return True
            elif any(fnmatch.fnmatch(p, pattern) for p in parts):
                return True
        return False

    def cache_key(self) -> str:
        """Hash of the settings that change findings (not output or exit options)."""
        d = asdict(self)
        for k in ("fail_on", "config_file", "exclude", "extend_exclude", "torch_npu_reason", "torch_npu_requested"):
            d.pop(k)
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]


def _glob_match(rel_path: str, pattern: str) -> bool:
    rel = rel_path.replace(os.sep, "/")
    return fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, "*/" + pattern) or fnmatch.fnmatch(os.path.basename(rel), pattern)


def find_config(start: str) -> Optional[str]:
    """The nearest pyproject.toml with a ``[tool.ascendify]`` table, from ``start`` upwards."""
    d = os.path.abspath(start)
    if os.path.isfile(d):
        d = os.path.dirname(d)
    while True:
        cand = os.path.join(d, "pyproject.toml")
        if os.path.isfile(cand):
            try:
                with open(cand, "rb") as fh:
                    if "ascendify" in tomllib.load(fh).get("tool", {}):
                        return cand
            except (OSError, tomllib.TOMLDecodeError):
                pass
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up


def load_settings(config_file: Optional[str], overrides: dict) -> Settings:
    """Settings from ``config_file`` (``[tool.ascendify]``) with ``overrides`` applied.

    Raises :class:`ConfigError` (one line, naming the file) on unreadable TOML,
    unknown keys or bad values.
    """
    s = Settings()
    if config_file:
        try:
            with open(config_file, "rb") as fh:
                table = tomllib.load(fh).get("tool", {}).get("ascendify", {})
        except OSError as exc:
            raise ConfigError(f"{config_file}: cannot read ({exc.strerror}); check the path given to --config")
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{config_file}: invalid TOML ({exc}); fix the file or pass --config")
        s.config_file = config_file
        known = {f.replace("_", "-") for f in Settings.__dataclass_fields__} - {"config-file", "torch-npu-reason"}
        for key, val in table.items():
            norm = key.replace("_", "-")
            if norm in OTHER_TABLES:
                continue
            if norm not in known:
                raise ConfigError(f"{config_file}: unknown key [tool.ascendify] {key}; known keys: {', '.join(sorted(known))}")
            setattr(s, norm.replace("-", "_"), val)
            if norm == "torch-npu":
                from ascendify.target import resolve

                s.torch_npu_reason = resolve(config_value=str(val), config_file=config_file).reason
    for key, val in overrides.items():
        if val is None or val == [] or val == ():
            continue
        if key in ("select_extend", "ignore_extend"):
            base = key.split("_")[0]
            setattr(s, base, getattr(s, base) + list(val))
        else:
            setattr(s, key, list(val) if isinstance(val, tuple) else val)
            if key == "torch_npu":
                s.torch_npu_reason = "from --torch-npu"
    return s.validate()
