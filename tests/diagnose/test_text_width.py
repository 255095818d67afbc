"""The diagnose text report fits the terminal: at COLUMNS=80 no line is wider than 80 columns, except a single URL
that cannot be cut (a link split in two cannot be followed); without COLUMNS, off a terminal, lines stay at 100."""

from __future__ import annotations

import re
from pathlib import Path

from ascendify.diagnose.cli import render_text
from tests.diagnose.diag_util import diagnose_text

ROOT = Path(__file__).resolve().parents[2]
LOG = (ROOT / "examples" / "logs" / "aicore_error.log").read_text(encoding="utf-8")


def test_at_80_columns_no_line_is_wider_than_80(tmp_path, monkeypatch):
    rep = diagnose_text(tmp_path, LOG)
    monkeypatch.setenv("COLUMNS", "80")
    text = render_text(rep)
    # a URL, or a file path the test's tmp folder makes long, is one word that cannot be cut
    wide = [ln for ln in text.splitlines() if len(ln) > 80 and not re.match(r"^\s*[<(]?(?:https?://)?\S+$", ln)]
    assert wide == []
    assert len(text.splitlines()) > 20


def test_off_a_terminal_the_report_keeps_its_100_column_lines(tmp_path, monkeypatch):
    rep = diagnose_text(tmp_path, LOG)
    monkeypatch.delenv("COLUMNS", raising=False)
    lines = render_text(rep).splitlines()
    first = next(ln for ln in lines if ln.startswith("First error in time"))
    assert len(first) > 80 and first.endswith(").")  # the summary line is one line, as before
    monkeypatch.setenv("COLUMNS", "80")
    assert not any(ln.startswith("First error in time") and ln.endswith(").") for ln in render_text(rep).splitlines())
