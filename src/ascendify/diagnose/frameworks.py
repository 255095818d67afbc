"""Framework settings for ``ascendify diagnose``: advice that depends on the framework the log comes from.

Data: ``data/frameworks.toml`` (``[[setting]]`` entries: framework(s), finding families, trigger substrings,
whether the advice leads the fix, the text and its source).  :func:`apply` adds the matching settings to each
finding (``Finding.settings`` names them): with ``lead = true`` the framework's knob comes first (an OOM under
vLLM leads with the ``--gpu-memory-utilization`` headroom, not with allocator fragmentation), otherwise it
follows the fix.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class Setting:
    id: str
    framework: tuple
    families: tuple
    any: tuple
    lead: bool
    text: str
    source: str
    verified: bool = True

    def applies(self, finding, framework: Optional[str]) -> bool:
        if "*" not in self.framework and (framework is None or framework not in self.framework):
            return False
        if self.families and finding.family not in self.families:
            return False
        if not self.any:
            return True
        blob = " ".join([finding.title, finding.cause, finding.reason or ""] + [e.text for e in finding.evidence[:5]]).lower()
        return any(a.lower() in blob for a in self.any)


def parse(data: dict) -> tuple:
    out = []
    seen = set()
    for raw in data.get("setting", []):
        sid = raw.get("id", "?")
        for k in ("framework", "text", "source"):
            if not raw.get(k):
                raise ValueError(f"framework setting {sid}: missing {k}")
        if sid in seen:
            raise ValueError(f"framework setting {sid}: duplicate id")
        seen.add(sid)
        if "http" not in raw["source"] and not (raw.get("verified") is False and raw.get("reason")):
            raise ValueError(f"framework setting {sid}: source has no URL")
        out.append(Setting(sid, tuple(raw["framework"]), tuple(raw.get("families", ())), tuple(raw.get("any", ())),
                           bool(raw.get("lead", False)), " ".join(raw["text"].split()), raw["source"],
                           bool(raw.get("verified", True))))
    return tuple(out)


@lru_cache(maxsize=1)
def load() -> tuple:
    text = resources.files("ascendify.diagnose").joinpath("data").joinpath("frameworks.toml").read_text(encoding="utf-8")
    return parse(tomllib.loads(text))


def apply(findings: list, framework: Optional[str]) -> None:
    """Add the settings that apply to each finding (leading or trailing its fix); ``details.framework_settings``
    names them."""
    settings = load()
    for f in findings:
        lead, tail, ids = [], [], []
        for s in settings:
            if s.applies(f, framework):
                (lead if s.lead else tail).append(s.text + ("" if s.verified else " (unverified)"))
                ids.append(s.id)
        if not ids:
            continue
        f.fix = " ".join(lead + [f.fix] + tail)
        f.settings = ids
