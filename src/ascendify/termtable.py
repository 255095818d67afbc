"""Tables that fit the terminal: a rich table when it fits the width, else one block per row.

:func:`report_console` is the console every text report prints to: ``$COLUMNS`` when set, else
the terminal's width on a TTY, else ``DEFAULT_WIDTH`` (a file or pipe).  :func:`print_table` prints
``rows`` under ``headers`` as a table when its natural width fits that console, and otherwise as
a list layout — the first cell on its own line, then ``header value`` pairs wrapped to the width —
so no number, verdict or name is ever cut or folded inside a narrow column (issue 22).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Optional, Sequence

DEFAULT_WIDTH = 160
"""Width off a terminal without ``$COLUMNS`` (reports written to files stay one line per row)."""


def report_width() -> int:
    """The width text reports lay out for (see the module docstring)."""
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) >= 20:
        return int(cols)
    if sys.stdout.isatty():
        try:
            return max(20, os.get_terminal_size(sys.stdout.fileno()).columns)
        except OSError:
            pass
    return DEFAULT_WIDTH


def report_console(stderr: bool = False, **kwargs: Any):
    """A rich Console of :func:`report_width` (highlighting off)."""
    from rich.console import Console

    kwargs.setdefault("highlight", False)
    return Console(width=report_width(), stderr=stderr, **kwargs)


def print_table(con, headers: Sequence[str], rows: Sequence[Sequence[Any]], *, title: Optional[str] = None,
                justify: Optional[dict] = None, markup: bool = True) -> str:
    """Print ``rows`` (cells: str or rich renderable text; rich markup allowed when ``markup``) as a
    table if it fits ``con.width``, else as a list; returns ``"table"`` or ``"list"``."""
    from rich.table import Table
    from rich.text import Text

    def text(cell: Any) -> Text:
        if isinstance(cell, Text):
            return cell
        return Text.from_markup(str(cell)) if markup else Text(str(cell))

    t = Table(title=title, title_justify="left")
    for h in headers:
        t.add_column(h, justify=(justify or {}).get(h, "left"), no_wrap=True)
    for r in rows:
        t.add_row(*[text(c) for c in r])
    natural = con.measure(t, options=con.options.update_width(100_000)).maximum  # unclamped by the console
    if natural <= con.width:
        con.print(t)
        return "table"
    all_cells = [[text(c) for c in r] for r in rows]
    # a column with one value in every row is said once, under the title
    same = {i for i in range(1, len(headers))
            if len(all_cells) > 1 and len({r[i].plain for r in all_cells if i < len(r)}) == 1}
    shared = "; ".join(f"{headers[i]} {all_cells[0][i].plain}" for i in sorted(same) if all_cells[0][i].plain)
    if title or shared:
        con.print(Text((title or "") + (f" ({shared} in every row)" if shared else ""), style="italic"))
    for cells in all_cells:
        parts = [f"{h} {c.plain}" for i, (h, c) in enumerate(zip(headers[1:], cells[1:]), 1) if c.plain and i not in same]
        line = (cells[0].plain if cells else "") + (" — " + " · ".join(parts) if parts else "")
        for ln in wrap(line, max(20, con.width), subsequent="    "):
            con.print(Text(ln), overflow="fold")
    return "list"


def wrap(text: str, width: int, initial: str = "", subsequent: str = "") -> list:
    """``text`` wrapped at spaces to ``width`` terminal cells (a CJK character takes two, as the
    terminal shows it), the first line after ``initial``, the others after ``subsequent``; a word
    wider than a line (a run of CJK text has no spaces) is cut at the cell limit.  Whitespace
    runs become one space."""
    from rich.cells import cell_len

    lines: list = []
    cur, empty = initial, True
    for word in text.split():
        while word:
            sep = "" if empty else " "
            if cell_len(cur) + len(sep) + cell_len(word) <= width:
                cur, empty, word = cur + sep + word, False, ""
            elif not empty:
                lines.append(cur)
                cur, empty = subsequent, True
            else:  # alone on its line and still too wide: cut it
                room, k = width - cell_len(cur), 0
                while k < len(word) and cell_len(word[:k + 1]) <= room:
                    k += 1
                k = max(k, 1)
                lines.append(cur + word[:k])
                cur, empty, word = subsequent, True, word[k:]
    if not empty or not lines:
        lines.append(cur)
    return lines


def print_wrapped(con, line) -> None:
    """Print one report line (str or a single-style rich Text) wrapped to ``con.width`` by
    :func:`wrap`: the continuation lines indented under it (its own indent plus a bullet's
    width, at least 4), never at column 0 as the terminal's own wrap puts them."""
    from rich.text import Text

    t = line if isinstance(line, Text) else Text(str(line))
    plain = t.plain
    body = plain.lstrip(" ")
    lead = plain[:len(plain) - len(body)]
    rest = " " * max(4, len(lead) + 2)
    for ln in wrap(body, con.width, lead, rest) if body else [plain]:
        con.print(Text(ln, style=t.style), overflow="fold")


KEEP = "\0"
"""Joins words :func:`wrap_prose` keeps on one line (printed as a space): ``f"PASS{KEEP}(>={KEEP}0.99)"``."""


def wrap_prose(text: str, width: Optional[int] = None, initial: str = "", subsequent: str = "  ") -> list:
    """A note or sentence wrapped at spaces to ``width`` (default :func:`report_width`), the first line
    after ``initial``, the others after ``subsequent``.  Unlike :func:`wrap` no word is ever cut: a URL,
    path or flag wider than the line stays whole on its own line, so it can still be copied.  Words
    joined by :data:`KEEP` stay together (a size and its unit) and print with a space between."""
    import textwrap

    width = max(20, width or report_width())
    lines = textwrap.wrap(text, width=width, initial_indent=initial, subsequent_indent=subsequent,
                          break_long_words=False, break_on_hyphens=False) or [initial.rstrip()]
    return [ln.replace(KEEP, " ") for ln in lines]
