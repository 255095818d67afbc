"""Helpers of the diagnose tests: a log written to the test's folder, diagnosed."""

from __future__ import annotations

from ascendify.diagnose.engine import diagnose


def write_log(tmp_path, text: str, name: str = "a.log") -> str:
    """``text`` written to ``tmp_path/name``; its path."""
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def diagnose_text(tmp_path, text: str, name: str = "a.log"):
    """The report of ``text`` as one log file."""
    return diagnose((write_log(tmp_path, text, name),))


def top_finding(tmp_path, text: str, name: str = "a.log"):
    """The first finding of ``text`` as one log file (the test fails when there is none)."""
    rep = diagnose_text(tmp_path, text, name)
    assert rep.findings, f"no finding for {text!r}"
    return rep.findings[0]


def ki_record(rid: str, quote: list, cause: str, fix: str, title: str = None, framework: str = None) -> dict:
    """A known-issue record of the demo project (``rid`` like ``demo#7``: its URL ends in issues/7); the title is
    the first quoted line unless given."""
    return {"id": rid, "project": "demo", "url": f"https://github.com/example/demo/issues/{rid.split('#')[1]}",
            "date": "2025-01-01", "title": title or quote[0][:60], "quote": quote, "affected": None, "fixed_in": None,
            "cause": cause, "fix": fix, "framework": framework, "resolution": "maintainer"}
