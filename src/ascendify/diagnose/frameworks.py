"""Framework settings for ``ascendify diagnose``: advice that depends on the framework the log comes from.

Data: ``data/frameworks.toml`` (``[[setting]]`` entries: framework(s), finding families, trigger substrings,
whether the advice leads the fix, the text and its source).  :func:`apply` adds the matching settings to each
finding (``Finding.settings`` names them): with ``lead = true`` the framework's knob comes first (an OOM under
vLLM leads with the ``--gpu-memory-utilization`` headroom, not with allocator fragmentation), otherwise it
follows the fix.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Optional

from ascendify.diagnose import reason as reason_mod

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
    regex: Optional[re.Pattern] = None
    cause: str = ""

    def match(self, finding, framework: Optional[str]) -> Optional[dict]:
        """The groups (``{}`` without a regex) when the setting applies to ``finding``, else None."""
        if "*" not in self.framework and (framework is None or framework not in self.framework):
            return None
        if self.families and finding.family not in self.families:
            return None
        if not self.any and self.regex is None:
            return {}
        frame = getattr(finding, "frame", None) or {}
        blob = " ".join([e.text for e in finding.evidence[:5]] + [finding.reason or "", finding.title, finding.cause,
                                                                   frame.get("path") or "", frame.get("function") or ""])
        if self.regex is not None:
            m = self.regex.search(blob)
            return None if m is None else {k: v for k, v in m.groupdict().items() if v}
        low = blob.lower()
        return {} if any(a.lower() in low for a in self.any) else None

    def applies(self, finding, framework: Optional[str]) -> bool:
        return self.match(finding, framework) is not None


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
        rx = raw.get("regex")
        if rx:
            from ascendify.diagnose.signatures import check_pattern

            check_pattern(rx)
        out.append(Setting(sid, tuple(raw["framework"]), tuple(raw.get("families", ())), tuple(raw.get("any", ())),
                           bool(raw.get("lead", False)), " ".join(raw["text"].split()), raw["source"],
                           bool(raw.get("verified", True)), re.compile(rx) if rx else None, " ".join(raw.get("cause", "").split())))
    return tuple(out)


DATA_FILES = ("frameworks.toml", "reasons.toml")


@lru_cache(maxsize=1)
def load() -> tuple:
    """The settings of ``data/frameworks.toml`` then the message-phrase rules of ``data/reasons.toml``."""
    root = resources.files("ascendify.diagnose").joinpath("data")
    out: tuple = ()
    for name in DATA_FILES:
        out += parse(tomllib.loads(root.joinpath(name).read_text(encoding="utf-8")))
    ids = [s.id for s in out]
    if len(ids) != len(set(ids)):
        raise ValueError("framework / reason settings: duplicate id")
    return out


def _fill(groups: dict, name: str, flag: bool) -> str:
    """``{name}`` -> the group's text; ``{name|flag}`` -> it as a command-line flag (``max_model_len`` ->
    ``--max-model-len``)."""
    v = groups.get(name)
    if not v:
        return "this"
    return "--" + v.strip("-").replace("_", "-") if flag else v


_OPTIONAL = re.compile(r"\[\[(.*?)\]\]")
_PLACE = re.compile(r"\{(\w+)(\|flag)?\}")


def _fill_text(text: str, groups: dict) -> str:
    """Fill ``{name}`` / ``{name|flag}``; a ``[[...]]`` segment is kept only when all its placeholders have values."""
    text = _OPTIONAL.sub(lambda m: m.group(1) if all(groups.get(p.group(1)) for p in _PLACE.finditer(m.group(1))) else "",
                         text)
    return " ".join(_PLACE.sub(lambda m: _fill(groups, m.group(1), bool(m.group(2))), text).split())


def apply(findings: list, framework: Optional[str]) -> None:
    """Add the settings that apply to each finding (leading or trailing its fix); ``details.framework_settings``
    names them."""
    settings = load()
    by_id = {s.id: s for s in settings}
    for f in findings:
        lead, tail, ids, causes = [], [], [], []
        for s in settings:
            groups = s.match(f, framework)
            if groups is None:
                continue
            fill = (lambda t: _fill_text(t, groups))
            text = fill(s.text) + ("" if s.verified else " (unverified)")
            if s.lead and s.regex is not None:
                lead.insert(sum(1 for x in ids if by_id[x].regex is not None and by_id[x].lead), text)  # phrase rules first
            else:
                (lead if s.lead else tail).append(text)
            if s.cause:
                causes.append(fill(s.cause))
            ids.append(s.id)
        if not ids:
            continue
        f.fix = " ".join(lead + [f.fix] + tail)
        if causes:
            f.cause = " ".join(causes) + " " + f.cause.replace(" " + reason_mod.UNREAD, "")  # the reason is read now
        f.settings = ids
