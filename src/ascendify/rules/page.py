"""A rule's page (``ascendify rule CODE``): Markdown, rich Markdown on a terminal, or plain text.

The page has the same sections as the report's rule pages: what it finds, why it matters on
NPU, an example (and its fixed form), the fix, and the source of the NPU fact.  Plain text
(a pipe, a file, ``NO_COLOR`` terminals) carries no Markdown markup: headings are underlined
words, paragraphs are wrapped, code is indented, and there is never more than one blank line.
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from typing import Callable, Optional

from ascendify.rules.registry import Rule

FIXABLE = {"safe": "yes (safe fix)", "unsafe": "yes, with --unsafe-fixes (review the change)", "": "no; change it by hand"}
SEVERITY_NOTE = "default; some findings adjust it to the target torch_npu release, the chip or the code around them"
UNVERIFIED = "Unverified: no public source confirms this NPU behaviour yet; treat it as advice."


def _sections(r: Rule) -> list[tuple[str, str, str]]:
    """(heading, kind, body) in page order; kind is "text" or "code"."""
    out = [("What it finds", "text", r.summary), ("Why it matters on NPU", "text", r.why), ("Example", "code", r.example)]
    if r.fixed_example.strip():
        out.append(("Fixed (--target npu)", "code", r.fixed_example))
    out.append(("Fix", "text", r.fix))
    src = r.source.strip()
    if not r.verified:
        src += "\n\n" + UNVERIFIED
    out.append(("Source", "text", src))
    return [(h, k, b.strip("\n")) for h, k, b in out if b.strip()]


def _meta(r: Rule) -> tuple[str, str, str]:
    return r.category, f"{r.severity} ({SEVERITY_NOTE})", FIXABLE[r.fixable]


def rule_page_markdown(r: Rule) -> str:
    """The page as Markdown (CommonMark; single blank lines between blocks)."""
    cat, sev, fix = _meta(r)
    parts = [f"# {r.code} {r.name}", f"**Category:** {cat} · **Severity:** {sev} · **Auto-fix:** {fix}"]
    for head, kind, body in _sections(r):
        parts.append(f"## {head}")
        body = body.strip().replace(UNVERIFIED, f"*{UNVERIFIED}*")
        if head == "Source":  # URLs as CommonMark autolinks: links on the HTML and terminal pages
            body = _URL.sub(r"<\1>", body)
        parts.append(f"```python\n{body}\n```" if kind == "code" else _squeeze(body))
    return "\n\n".join(parts) + "\n"


def _squeeze(text: str) -> str:
    """Collapse runs of blank lines to one."""
    return re.sub(r"\n\s*\n(\s*\n)+", "\n\n", text)


_URL = re.compile(r"(?<![<(`])(https?://[^\s<>`\]]*[^\s<>`\].,;:)])")
_LIST_ITEM = re.compile(r"^(\s*(?:[-*]|\d+[.)])\s+)")


def _wrap_paragraphs(text: str, width: int, indent: str = "  ") -> list[str]:
    """Paragraphs (blank-line separated) re-flowed to ``width``; list items keep their marker and
    hang under it; Markdown emphasis (``**x**``, ``*x*``) is dropped, `code` spans kept."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text.strip()):
        lines = [ln.strip() for ln in para.splitlines() if ln.strip()]
        items: list[str] = []
        for ln in lines:  # a list item starts a new line; other lines continue the current one
            if _LIST_ITEM.match(ln) or not items:
                items.append(ln)
            else:
                items[-1] += " " + ln
        if out:
            out.append("")
        for item in items:
            item = re.sub(r"\*\*([^*]+)\*\*", r"\1", item)
            item = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\1", item)
            m = _LIST_ITEM.match(item)
            hang = indent + " " * (len(m.group(1)) if m else 0)
            out.extend(textwrap.wrap(item, width=width, initial_indent=indent, subsequent_indent=hang,
                                     break_long_words=False, break_on_hyphens=False) or [indent])
    return out


def rule_page_text(r: Rule, width: int = 88) -> str:
    """The page as plain text: no Markdown markup, at most one blank line in a row."""
    cat, sev, fix = _meta(r)
    title = f"{r.code}  {r.name}"
    lines = [title, "=" * len(title), f"Category: {cat}", f"Severity: {sev}", f"Auto-fix: {fix}"]
    for head, kind, body in _sections(r):
        lines += ["", head, "-" * len(head)]
        if kind == "code":
            lines += [("    " + ln).rstrip() for ln in textwrap.dedent(body).strip("\n").splitlines()]
        else:
            lines += _wrap_paragraphs(body, width)
    text = "\n".join(ln.rstrip() for ln in lines)
    return re.sub(r"\n{3,}", "\n\n", text) + "\n"


def show(r: Rule, fmt: str, output_file: Optional[str], emit: Callable[[str, Optional[str]], None],
         isatty: Optional[bool] = None) -> None:
    """Print ``r``'s page: ``--format markdown`` → Markdown; a terminal (stdout, no ``-o``, no
    ``NO_COLOR``) → rich-rendered Markdown; otherwise plain text.  ``emit(text, output_file)``
    writes the Markdown / text forms."""
    if fmt == "markdown":
        emit(rule_page_markdown(r), output_file)
        return
    tty = sys.stdout.isatty() if isatty is None else isatty
    if output_file is None and tty and not os.environ.get("NO_COLOR"):
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(rule_page_markdown(r)))
        return
    emit(rule_page_text(r), output_file)
