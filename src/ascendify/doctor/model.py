"""Check results and the report (JSON schema: ``doctor/data/report.schema.json``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Dict, List, Optional

STATUSES = ("ok", "warn", "fail", "skipped")
SCHEMA_ID = "ascendify.doctor/1"
_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


@lru_cache(maxsize=1)
def rules() -> Dict[str, Any]:
    """The doctor's data file (``doctor/data/doctor_rules.json``)."""
    with open(os.path.join(_DATA, "doctor_rules.json"), encoding="utf-8") as fh:
        return json.load(fh)


def schema() -> Dict[str, Any]:
    """The JSON schema of ``ascendify doctor --format json``."""
    with open(os.path.join(_DATA, "report.schema.json"), encoding="utf-8") as fh:
        return json.load(fh)


@dataclass
class Check:
    """One check.  ``status``: ok / warn / fail / skipped; ``found`` / ``expected`` /
    ``fix``: one line each (``fix`` is a command or action); ``details``: JSON-able
    extras (versions, paths, rows); ``source``: where the rule comes from."""

    id: str
    title: str
    status: str
    found: Optional[str] = None
    expected: Optional[str] = None
    fix: Optional[str] = None
    details: Dict[str, Any] = field(default_factory=dict)
    source: Optional[str] = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"bad status {self.status!r}")

    def to_dict(self) -> Dict[str, Any]:
        return {"id": self.id, "title": self.title, "status": self.status, "found": self.found,
                "expected": self.expected, "fix": self.fix, "details": self.details, "source": self.source}


@dataclass
class Report:
    checks: List[Check]
    facts: Dict[str, Any]
    root: str
    stack_present: bool
    require_npu: bool
    chip: Dict[str, Any]
    notes: List[str] = field(default_factory=list)

    def get(self, check_id: str) -> Optional[Check]:
        return next((c for c in self.checks if c.id == check_id), None)

    @property
    def summary(self) -> Dict[str, int]:
        out = {s: 0 for s in STATUSES}
        for c in self.checks:
            out[c.status] += 1
        return out

    @property
    def status(self) -> str:
        s = self.summary
        return "fail" if s["fail"] else ("warn" if s["warn"] else "ok")

    def exit_code(self, strict: bool = False) -> int:
        """0 = usable (or no Ascend stack and no ``--require-npu``); 1 = a check failed
        (or warned, with ``strict``)."""
        if not self.stack_present and not self.require_npu:
            return 0
        if self.status == "fail" or (strict and self.status == "warn"):
            return 1
        return 0

    def to_dict(self, strict: bool = False) -> Dict[str, Any]:
        from ascendify import __version__
        return {
            "schema": SCHEMA_ID,
            "ascendify_version": __version__,
            "status": self.status,
            "exit_code": self.exit_code(strict),
            "stack_present": self.stack_present,
            "root": self.root,
            "chip": self.chip,
            "facts": self.facts,
            "summary": self.summary,
            "checks": [c.to_dict() for c in self.checks],
            "notes": self.notes,
        }
