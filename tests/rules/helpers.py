"""Run one rule over a fixture file, and fix a fixture in memory."""

from __future__ import annotations

import os
import re

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import read_source

CASES = os.path.join(os.path.dirname(__file__), "cases")
EXPECT = re.compile(r"#.*\bexpect:\s*([A-Z]{3}\d{3}(?:\s*,\s*[A-Z]{3}\d{3})*)")


CASE_SETTINGS = {"IMP002": {"torch_npu": "2.4.0"}}
"""Settings a rule's fixtures are judged with (IMP002 reports only releases before autoload, 2.5.1)."""


def settings_for(code: str, target: str = "npu", **kw) -> Settings:
    return Settings(select=[code], target=target, **{**CASE_SETTINGS.get(code, {}), **kw}).validate()


def findings_for(path: str, code: str, **kw):
    src = read_source(path)
    return [f for f in analyze_source(src, os.path.basename(path), settings_for(code, **kw)) if f.code == code]


def expected_lines(path: str, code: str) -> list[int]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            m = EXPECT.search(line)
            if m and code in [c.strip() for c in m.group(1).split(",")]:
                out.append(i)
    return out


def fixed_text(path: str, code: str, target: str = "npu", unsafe: bool = True, **kw) -> str:
    src = read_source(path)
    s = settings_for(code, target, unsafe_fixes=unsafe, **kw)
    findings = analyze_source(src, os.path.basename(path), s)
    text, _applied, _rem, _unsafe, error = fix_source(src, findings, s, os.path.basename(path))
    assert error is None, error
    return text
