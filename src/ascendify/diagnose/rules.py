"""Link diagnose findings to the ``ascendify scan`` rules that find their cause in code."""

from __future__ import annotations

from typing import Iterable


def rule_info(codes: Iterable[str]) -> list:
    """``[{"code", "name", "summary"}]`` for the codes that exist in
    :func:`ascendify.rules.registry.load_rules` (others are left out)."""
    codes = [c for c in codes if c]
    if not codes:
        return []
    try:
        from ascendify.rules.registry import load_rules

        rules = load_rules()
    except Exception:  # noqa: BLE001 - the registry is optional for diagnose
        return []
    return [{"code": r.code, "name": r.name, "summary": r.summary} for r in (rules.get(c) for c in codes) if r is not None]
