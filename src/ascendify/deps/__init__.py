"""Dependency audit: what a project declares that cannot be installed or run on an Ascend host.

* :mod:`.parse` — requirements*/constraints* (with ``-r``/``-c``), pyproject.toml (PEP 621, Poetry),
  setup.py / setup.cfg, environment.yml, Pipfile, each requirement with its file, line and column;
* :mod:`.audit` — DEP findings (rules/data/dep.toml) from the knowledge in ``deps/data/``;
* :mod:`.fix` — the ``torch-npu`` pin next to the pinned torch, and :func:`fix_tree`, the fix run
  that also applies DEP fixes.

``ascendify scan`` adds the audit's findings through :func:`add_to_scan`; ``fix`` / ``migrate``
call :func:`fix_tree`.
"""

from __future__ import annotations

from ascendify.deps.audit import audit_paths
from ascendify.deps.fix import fix_tree

__all__ = ["add_to_scan", "audit_paths", "fix_tree"]


def add_to_scan(paths, settings, result) -> None:
    """Audit the dependency files under ``paths`` (walked as the scan walks, its excludes applied)
    and add the DEP findings to ``result`` (a ``ScanResult``); a dependency file with findings
    is counted among ``result.files`` with its line count."""
    from ascendify.deps.parse import split_lines
    from ascendify.diagnostics import Finding

    if not any(settings.enabled(f"DEP00{i}") for i in range(1, 10)):
        return
    try:
        findings, files = audit_paths(paths, settings)
    except Exception as exc:  # a bug in the audit must not cost the user the scan of the code: say it, go on
        result.problems.append((", ".join(str(p) for p in paths), f"dependency audit failed ({type(exc).__name__}: {exc}); DEP findings are missing — please report it"))
        return
    if not findings:
        return
    with_findings = {f.path for f in findings}
    for df in files:
        if df.path in with_findings and df.path not in result.lines:
            result.files.append(df.path)
            result.lines[df.path] = len(split_lines(df.text)) if df.text else 0
    result.findings = sorted(list(result.findings) + findings, key=Finding.sort_key)
