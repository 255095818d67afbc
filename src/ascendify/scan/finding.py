"""The diagnostic types, kept importable here: they live in :mod:`ascendify.diagnostics`."""

from __future__ import annotations

from ascendify.diagnostics import SEVERITIES, Edit, Finding, Fix, severity_rank

__all__ = ["SEVERITIES", "Edit", "Finding", "Fix", "severity_rank"]
