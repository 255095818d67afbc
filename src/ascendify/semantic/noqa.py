"""``# noqa`` comments: which codes a line suppresses (flake8/ruff syntax).

Shared by the per-file scan and the project pass (a summary keeps a file's comments
with their codes, so ``# noqa: E501`` on a call site does not hide its DEV026).
"""

from __future__ import annotations

import re

NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def noqa_map(lines: list) -> dict:
    """Line (1-based) → the codes suppressed there as a frozenset, or None for a bare ``# noqa``."""
    out: dict = {}
    for i, line in enumerate(lines, 1):
        if "noqa" not in line and "NOQA" not in line:
            continue
        m = NOQA.search(line)
        if m:
            codes = m.group("codes")
            out[i] = frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c) if codes else None
    return out


def suppresses(codes, code: str) -> bool:
    """Does a line's ``codes`` (a :func:`noqa_map` value, or a summary's sorted list of them) hide ``code``?"""
    return codes is None or code in codes
