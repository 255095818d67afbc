"""The project pass: the project checks over the facts the module summaries make together.

The model (:class:`ascendify.semantic.project.Project`) resolves the imports and the calls across
the scanned modules; each project check (registered with
:func:`ascendify.rules.registry.project_check`, in ``rules/checks``) decides what of that is a
finding, as a file check does for one module.  :func:`join` runs them once per scan, after every
pass that makes the files' findings (in scan, and on the final state of a fix run).
"""

from __future__ import annotations

from typing import Optional

from ascendify.rules.registry import PROJECT_CHECKS, load_checks
from ascendify.semantic.project import Project, suppressed


class ProjectContext:
    """What a project check gets: the model's :class:`~ascendify.semantic.project.Project`
    (``project``), the ``settings`` of the scan, the rule pages (``rules``, code → Rule) and the
    scan's ``findings`` (a check may take back a fix there: CUDA-only code by intent)."""

    def __init__(self, project: Project, settings, rules: dict, findings: Optional[list]):
        self.project = project
        self.settings = settings
        self.rules = rules
        self.findings = findings

    def enabled(self, code: str, rel: str, summary: dict, line: int) -> bool:
        """``code`` is on for ``rel`` and no ``# noqa`` on ``line`` of that module hides it."""
        return self.settings.enabled(code, rel) and not suppressed(summary, line, code)


def join(summaries: dict, settings, rules: dict, findings: Optional[list] = None) -> list:
    """The cross-file findings of the project checks for ``summaries`` (rel path → summary; empty
    ones are skipped); ``findings`` (the scan's) give the messages of the helpers' work.  Each check
    runs whatever ``--select`` says (a rule it does not enable is never reported: each check asks
    :meth:`ProjectContext.enabled`), once."""
    if len([v for v in summaries.values() if v]) < 2:
        return []
    load_checks()
    pctx = ProjectContext(Project(summaries, findings), settings, rules, findings)
    out: list = []
    for code, fns in PROJECT_CHECKS.items():
        if not getattr(rules.get(code), "cross_file", False):  # the rule data declares each project check
            continue
        for fn in fns:
            out.extend(fn(pctx))
    return out
