"""Write the generated chip-memory table into docs/chips.md.

The table sits between ``<!-- chip-memory:start -->`` and ``<!-- chip-memory:end -->``
and is rendered by ``ascendify.kb.chips.memory_table_markdown()`` from
``src/ascendify/kb/data/chip_memory.toml``; the rest of the doc is hand-written.
``tests/kb/test_chip_memory.py`` checks that the doc matches the data.

Usage: ``python tools/chip_memory_doc.py``
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "src"))

from ascendify.fsutil import atomic_write  # noqa: E402
from ascendify.kb.chips import memory_table_markdown  # noqa: E402

DOC = os.path.join(REPO, "docs", "chips.md")
START = "<!-- chip-memory:start -->"
END = "<!-- chip-memory:end -->"


def main() -> int:
    text = open(DOC, encoding="utf-8").read()
    i, j = text.index(START) + len(START), text.index(END)
    new = text[:i] + "\n" + memory_table_markdown() + text[j:]
    if new != text:
        atomic_write(DOC, new.encode("utf-8"))
        print(f"updated {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
