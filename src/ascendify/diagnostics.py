"""Findings, fixes and edits: the data every scan rule produces (the ground floor: the semantic
model, the rules, the fix engine and the output formats all import them from here).

Positions: ``line`` is 1-based, ``col`` is a
0-based *character* column (``ast`` gives UTF-8 byte offsets; the scan
converts them).  Output formats add 1 to the column, as ruff and flake8 do.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional

SEVERITIES = ("info", "warning", "silent", "error")
"""Severity order, lowest first.  ``silent`` = runs, but silently wrong on NPU
(the run lands on the CPU, AMP or DDP quietly off, fp64 quietly cast)."""


def severity_rank(severity: str) -> int:
    """Position of ``severity`` in :data:`SEVERITIES` (``ValueError`` if unknown)."""
    return SEVERITIES.index(severity)


@dataclass(frozen=True)
class Edit:
    """One change to a file.

    kind:
      ``replace``     replace the expression at ``start``..``end`` by ``text``
                      (the character range of the ``ast`` node the check saw);
      ``attr``        rename the attribute of the Attribute at ``start``..``end``;
      ``add_arg``     append the keyword argument ``text`` to the Call there;
      ``set_args``    replace all arguments of the Call there by ``text``;
      ``add_import``  ensure the module has the statement ``text`` (an
                      ``import ...``) after its last top-level ``torch`` import;
      ``add_prelude`` ensure the statement ``text`` exists after the imports.
    """

    kind: str
    text: str
    start: tuple = (0, 0)
    end: tuple = (0, 0)


@dataclass(frozen=True)
class Fix:
    """A set of edits that together fix one finding.

    ``safe`` fixes keep behaviour on GPU and NPU; unsafe ones need review
    (applied only with ``--unsafe-fixes``).  ``operation`` is a short verb
    phrase for the change log (e.g. ``"replace .cuda() with .npu()"``).
    """

    edits: tuple
    safe: bool = True
    operation: str = ""


NOTE_SEPARATOR = " — "
"""How a note follows the message (and the note before it) where a finding is rendered as one line of text."""


@dataclass(frozen=True)
class Note:
    """What the fix policy (or the project pass) says about a finding, beside its message:
    ``kind`` names the situation (``table``, ``decorator``, ``intent``, ``compat``, ``dead``, ``held``),
    ``line`` the line of this file it points at (the guard a body sits under), when it points at one;
    in a notebook ``cell`` is the code cell and ``line`` the line within it (as the finding's
    ``cell``/``cell_line``)."""

    text: str
    kind: str = ""
    line: Optional[int] = None
    cell: Optional[int] = None

    def to_dict(self) -> dict[str, Any]:
        d = {"text": self.text, "kind": self.kind, "line": self.line}
        if self.cell is not None:
            d["cell"] = self.cell
        return d

    @classmethod
    def from_dict(cls, d: Any) -> "Note":
        if isinstance(d, str):
            return cls(d)
        return cls(str(d.get("text", "")), str(d.get("kind") or ""), d.get("line"), d.get("cell"))


@dataclass
class Finding:
    """One rule violation at one place in one file."""

    code: str
    message: str
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    severity: str
    category: str
    fix: Optional[Fix] = None
    cell: Optional[int] = None  # notebooks: 1-based code-cell number
    cell_line: Optional[int] = None  # notebooks: line inside that cell
    related: Optional[list] = None  # other places that explain it: [{"path", "line", "col", "message"}] (cross-file findings; in a notebook also "cell", "line" in that cell)
    json_line: Optional[int] = None  # notebooks: the line of that source line inside the .ipynb JSON (SARIF regions)
    notes: list = field(default_factory=list)  # Note: what the fix policy did and why (never spliced into message)

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    def note(self, text: str, kind: str = "", line: Optional[int] = None) -> None:
        """Add a note (the message itself is never edited)."""
        self.notes.append(Note(text, kind, line))

    def notes_in_cells(self, cell_of) -> None:
        """A notebook's notes in cell coordinates: ``cell_of(line)`` gives (cell, line in the cell)."""
        out = []
        for n in self.notes:
            if n.line is not None and n.cell is None:
                cell, line = cell_of(n.line)
                if cell is not None:
                    n = Note(n.text, n.kind, line, cell)
            out.append(n)
        self.notes = out

    def related_in_cells(self, cell_of, json_line=None) -> None:
        """A notebook's related locations in that notebook in cell coordinates, as its notes
        (:meth:`notes_in_cells`): ``cell`` the code cell, ``line`` the line in it, and, where
        ``json_line(line)`` knows it, ``json_line`` that line's line in the ``.ipynb`` JSON (SARIF
        regions).  Entries in other files are left as they are."""
        out = []
        for r in self.related or ():
            line = r.get("line")
            if r.get("path") == self.path and r.get("cell") is None and isinstance(line, int):
                cell, cell_line = cell_of(line)
                if cell is not None:
                    r = dict(r, line=cell_line, cell=cell)
                    at = json_line(line) if json_line is not None else None
                    if at is not None:
                        r["json_line"] = at
            out.append(r)
        self.related = out

    @property
    def full_message(self) -> str:
        """The message and its notes as one line of text: what text, CSV, SARIF and HTML show."""
        if not self.notes:
            return self.message
        return self.message + "".join(NOTE_SEPARATOR + n.text for n in self.notes)

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.code)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["notes"] = [n.to_dict() for n in self.notes]
        if d.get("json_line") is None:
            d.pop("json_line", None)
        d["fixable"] = self.fixable
        if self.fix is not None:
            d["fix"] = {
                "safe": self.fix.safe,
                "operation": self.fix.operation,
                "edits": [asdict(e) for e in self.fix.edits],
            }
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Finding":
        d = dict(d)
        d.pop("fixable", None)
        fx = d.pop("fix", None)
        d["notes"] = [Note.from_dict(n) for n in d.get("notes") or ()]
        fix = None
        if fx is not None:
            fix = Fix(
                edits=tuple(
                    Edit(e["kind"], e["text"], tuple(e["start"]), tuple(e["end"])) for e in fx["edits"]
                ),
                safe=fx["safe"],
                operation=fx["operation"],
            )
        return cls(fix=fix, **d)
