"""`ascendify rule CODE`: rich Markdown on a terminal, plain text otherwise (rules/page.py)."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from ascendify.rules import page as rulepage
from ascendify.rules.registry import load_rules

from ..cli_util import run_cli

RULES = load_rules()


@pytest.mark.parametrize("code", sorted(RULES))
def test_plain_text_page_has_no_markup(code):
    r = RULES[code]
    text = rulepage.rule_page_text(r)
    assert text.startswith(f"{code}  {r.name}\n")
    prose = re.sub(r"`[^`]*`", "", "\n".join(ln for ln in text.splitlines() if not ln.startswith("    ")))
    assert not re.search(r"\*\*\S", prose) and "```" not in text and "\n#" not in text  # no bold, fences or headings
    assert "\n\n\n" not in text and not text.endswith("\n\n")
    for head in ("What it finds", "Why it matters on NPU", "Example", "Fix", "Source"):
        assert f"\n{head}\n{'-' * len(head)}\n" in text
    assert "Category: " + r.category in text
    if not r.verified:
        assert rulepage.UNVERIFIED in text


@pytest.mark.parametrize("code", sorted(RULES))
def test_markdown_page_is_well_formed(code):
    md = rulepage.rule_page_markdown(RULES[code])
    assert md.startswith(f"# {code} ") and "\n\n\n" not in md
    assert md.count("```") % 2 == 0 and "## Why it matters on NPU" in md


def test_rule_command_prints_plain_text_when_piped(tmp_path):
    r = run_cli("rule", "dev001", cwd=str(tmp_path))
    assert r.code == 0, r.err
    assert r.out.startswith("DEV001  tensor-cuda-method\n")
    assert "**Category:**" not in r.out and "\n\n\n" not in r.out and "Category: device" in r.out
    r = run_cli("rule", "DEV001", "--format", "markdown", cwd=str(tmp_path))
    assert r.out.startswith("# DEV001 tensor-cuda-method\n\n**Category:** device") and "\n\n\n" not in r.out
    out = tmp_path / "page.txt"
    r = run_cli("rule", "DEV001", "-o", str(out), cwd=str(tmp_path))
    assert out.read_text(encoding="utf-8") == rulepage.rule_page_text(RULES["DEV001"])


def test_terminal_gets_rendered_markdown(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    buf = io.StringIO()
    emitted = []
    with contextlib.redirect_stdout(buf):
        rulepage.show(RULES["DEV001"], "text", None, lambda t, o: emitted.append(t), isatty=True)
    shown = buf.getvalue()
    assert emitted == []  # rich printed it
    assert "Why it matters on NPU" in shown and "**" not in shown and "## " not in shown
    # NO_COLOR: plain text through emit
    monkeypatch.setenv("NO_COLOR", "1")
    rulepage.show(RULES["DEV001"], "text", None, lambda t, o: emitted.append(t), isatty=True)
    assert emitted == [rulepage.rule_page_text(RULES["DEV001"])]
