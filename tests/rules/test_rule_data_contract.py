"""What the rule data declares holds: every rule page's example really triggers its rule.

For each rule in ``rules/data/*.toml`` (the page ``ascendify rule CODE`` shows):

* its ``example``, scanned as a project with ``--select CODE``, reports CODE;
* its ``fixed_example`` (the page's "Fixed (--target npu)" section) does not, except on a
  line marked ``# left for a person`` (what the rule reports without a fix);
* ``fixable`` agrees with the fixes the check attaches, on the example and on every finding
  of the rules' fixtures (``tests/rules/cases``) and the bundled examples, both targets:
  ``""`` never a fix; ``"safe"`` some fix, unsafe ones only where the page's Fix section
  says which; ``"unsafe"`` some unsafe fix, safe ones only where the Fix section says which;
* for fixable rules, ``ascendify fix --write`` on the example (``--unsafe-fixes`` for an
  unsafe rule) leaves files that parse, that the rule flags no more than it did without a
  fix, and that are the page's fixed example (comments aside);
* the messages of the findings on each example match a golden file,
  ``tests/data/golden/rule_page_messages.txt`` (a ``[CODE]`` section per rule).  After a
  deliberate change of a message, or a new rule, rewrite it with
  ``ASCENDIFY_UPDATE_GOLDEN=1 pytest tests/rules/test_rule_data_contract.py`` and review the diff.

``NOT_A_FILE`` lists the rules whose example cannot be written as a file, with the reason.

An example is scanned through the CLI (``scan``/``fix`` in-process, ``--no-cache -j 1``),
so the project pass, the dependency audit and the file-kind rules run as for a user.

Examples are Python code blocks.  One that needs more than one file (a project-level rule,
a dependency file, a configuration) names each file on a comment line of its own,
``# utils/dist.py`` or ``# requirements.txt``, and the lines up to the next such line are
that file, written as UTF-8 unless a note on that line says ``saved as GBK`` (or another
encoding).  Lines of a file that is not Python are shown commented out
(``# torch==2.1.0``) and the ``# `` is removed here.  A ``# pyproject.toml`` file with a
``[tool.ascendify]`` table is the scan's configuration (how an example says it needs
``--torch-npu 2.4.0`` or ``--chip``); without one the scan runs with ``--no-config``.
An example with no file line is one file, ``example.py``.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
import textwrap

import pytest

from ascendify.rules.registry import load_rules

from ..cli_util import run_cli
from .helpers import CASE_SETTINGS, CASES

RULES = load_rules()

NOT_A_FILE = {
    # The rule reports a file a page cannot show as text: its example describes the file.
    "SYN003": "an unreadable file (binary, over 5 MB, an OS error); tested in tests/test_bad_input.py",
}
"""Rules whose page example cannot be a file, and why (keep this short)."""

CODES = [c for c in RULES if c not in NOT_A_FILE]
GOLDEN = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "golden", "rule_page_messages.txt")
UPDATE = bool(os.environ.get("ASCENDIFY_UPDATE_GOLDEN"))

_FILE_LINE = re.compile(r"^#\s+((?:[\w.-]+/)*[\w.-]+\.(?:py|ipynb|txt|in|toml|cfg|yml|yaml|cu|cuh))(?:\s(.*))?$")
_SAVED_AS = re.compile(r"\bsaved as ([\w-]+)", re.I)


def example_files(text: str) -> dict:
    """``{relative path: content}`` of an example (see the module docstring); the content is
    bytes for a file whose line says it is ``saved as`` an encoding other than UTF-8."""
    text = textwrap.dedent(text).strip("\n")
    files: dict = {}
    encoding: dict = {}
    current = None
    for line in text.splitlines():
        m = _FILE_LINE.match(line)
        if m:
            current = m.group(1)
            files[current] = []
            saved = _SAVED_AS.search(m.group(2) or "")
            if saved:
                encoding[current] = saved.group(1)
            continue
        if current is None:
            current = "example.py"
            files[current] = []
        files[current].append(line)
    out: dict = {}
    for path, lines in files.items():
        if not path.endswith(".py"):
            lines = [re.sub(r"^# ?", "", ln) if ln.startswith("#") else ln for ln in lines]
        content = "\n".join(lines).strip("\n") + "\n"
        out[path] = content.encode(encoding[path]) if path in encoding else content
    return out


def write_files(root, files: dict) -> None:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")


def _config_args(root) -> list:
    cfg = root / "pyproject.toml"
    return ["--config", str(cfg)] if cfg.is_file() else ["--no-config"]


def scan(root, code: str, target: str = "npu") -> list:
    """The findings (JSON objects) of rule ``code`` on the project in ``root``."""
    r = run_cli("scan", ".", "--select", code, "--target", target, "--format", "json", "--no-cache", "-j", "1",
                "--fail-on", "never", *_config_args(root), cwd=str(root))
    assert r.code == 0, r.err
    return [f for f in json.loads(r.out)["findings"] if f["code"] == code]


def fix_in_place(root, code: str, target: str = "npu", unsafe: bool = False) -> None:
    """``ascendify fix --write`` for rule ``code`` (``--unsafe-fixes`` with ``unsafe`` or for an unsafe rule)."""
    flag = ["--unsafe-fixes"] if unsafe or RULES[code].fixable == "unsafe" else []
    r = run_cli("fix", ".", "--select", code, "--target", target, "--write", *flag, "--no-cache", "-j", "1",
                "--fail-on", "never", *_config_args(root), cwd=str(root))
    assert r.code == 0, r.err


@pytest.fixture(scope="module")
def example_findings(tmp_path_factory) -> dict:
    """``{code: findings on the rule's example}``, each example scanned once."""
    out = {}
    for code in CODES:
        root = tmp_path_factory.mktemp(code)
        write_files(root, example_files(RULES[code].example))
        out[code] = scan(root, code)
    return out


@pytest.mark.parametrize("code", CODES)
def test_example_fires_its_rule(code, example_findings):
    assert example_findings[code], f"{code}'s page example does not report {code}:\n{RULES[code].example}"


LEFT = "# left for a person"
"""A line of a fixed example that the rule still reports (what it reports without a fix) says so."""


@pytest.mark.parametrize("code", [c for c in CODES if RULES[c].fixed_example.strip()])
def test_fixed_example_does_not_fire(code, tmp_path):
    files = example_files(RULES[code].fixed_example)
    write_files(tmp_path, files)
    got = [(f["path"], f["line"], f["message"]) for f in scan(tmp_path, code)
           if LEFT not in files[f["path"]].splitlines()[f["line"] - 1]]
    assert got == [], f"{code}'s fixed example still reports {code} (on a line not marked {LEFT!r})"


def _fix_kinds_agree(code: str, fixes: list) -> str:
    """'' when the fixes' safety agrees with the rule's ``fixable``, else what is wrong.

    ``fixable = ""``: no fix.  ``"safe"``: some fix, and unsafe ones only where the page's Fix
    section says which are unsafe.  ``"unsafe"``: some unsafe fix, and safe ones only where
    the Fix section says which are safe."""
    r = RULES[code]
    safe = [s for s in fixes if s]
    unsafe = [s for s in fixes if not s]
    if not r.fixable:
        return f"fixable = \"\" but {len(fixes)} fix(es)" if fixes else ""
    if not fixes:
        return f"fixable = {r.fixable!r} but no fix"
    if r.fixable == "safe" and unsafe and "unsafe" not in r.fix:
        return "fixable = 'safe' but unsafe fixes, and the Fix section does not say when"
    if r.fixable == "unsafe" and not unsafe:
        return "fixable = 'unsafe' but every fix is safe"
    if r.fixable == "unsafe" and safe and not re.search(r"\bsafe\b", r.fix):
        return "fixable = 'unsafe' but safe fixes, and the Fix section does not say when"
    return ""


@pytest.mark.parametrize("code", CODES)
def test_fixable_matches_the_fixes_on_the_example(code, example_findings):
    fixes = [f["fix"]["safe"] for f in example_findings[code] if f["fix"]]
    assert _fix_kinds_agree(code, fixes) == "", f"{code}'s example: {_fix_kinds_agree(code, fixes)}"


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_fixable_matches_the_fixes_on_the_fixtures():
    """The same agreement for every finding of every rule on the rules' fixtures
    (``tests/rules/cases``) and the bundled examples, over both targets (``fixable`` is one
    flag for both: DST002's only agnostic fix is safe, its npu comparisons unsafe)."""
    from ascendify.config import Settings
    from ascendify.scan.engine import discover, scan_files

    roots = [CASES, os.path.join(ROOT, "examples")]
    fixes: dict = {}
    for target in ("npu", "agnostic"):
        s = Settings(target=target, unsafe_fixes=True, **CASE_SETTINGS["IMP002"]).validate()
        for f in scan_files(discover(roots, s, lambda p, m: None), s, None, jobs=1).findings:
            if f.code in RULES:
                fixes.setdefault(f.code, []).extend([f.fix.safe] if f.fix else [])
    assert len(fixes) > 90  # the fixtures exercise nearly every rule
    wrong = {c: _fix_kinds_agree(c, fx) for c, fx in sorted(fixes.items()) if fx or not RULES[c].fixable}
    assert {c: w for c, w in wrong.items() if w} == {}


@pytest.mark.parametrize("target,unsafe", [("npu", False), ("agnostic", True)])
@pytest.mark.parametrize("code", [c for c in CODES if RULES[c].fixable])
def test_fixing_the_example_removes_the_finding(code, target, unsafe, tmp_path):
    """``--target npu`` with the flag the page names; ``--target agnostic`` with every fix."""
    files = example_files(RULES[code].example)
    write_files(tmp_path, files)
    before = scan(tmp_path, code, target)
    assert before, f"{code}'s example reports nothing for --target {target}"
    if target == "agnostic":
        from ascendify.target import agnostic_torch_conflict

        if agnostic_torch_conflict(str(tmp_path)):  # fix refuses the agnostic target on a torch before 2.6
            return  # (tests/test_agnostic_torch_floor.py)
    fix_in_place(tmp_path, code, target, unsafe)
    for rel in files:
        if rel.endswith(".py"):
            ast.parse((tmp_path / rel).read_text(encoding="utf-8"), filename=rel)
    unfixed = {f["message"] for f in before if not f["fix"] or (not f["fix"]["safe"] and not unsafe and RULES[code].fixable == "safe")}
    left = [(f["path"], f["line"], f["message"]) for f in scan(tmp_path, code, target) if f["message"] not in unfixed]
    assert left == [], f"{code} still reports, after fixing its example, more than what it reported without a fix it applied"


def _code_only(text: str) -> list:
    """The lines of ``text`` without trailing ``  # comments`` (a page may annotate its fixed example)."""
    return [re.sub(r"\s+#\s.*$", "", ln).rstrip() for ln in text.splitlines()]


@pytest.mark.parametrize("code", [c for c in CODES if RULES[c].fixable and RULES[c].fixed_example.strip()])
def test_fixed_example_is_what_fix_writes(code, tmp_path):
    """The page's "Fixed (--target npu)" section is what ``ascendify fix`` (``--unsafe-fixes`` for an
    unsafe rule) writes for its example with the default settings, comments aside."""
    files = example_files(RULES[code].example)
    write_files(tmp_path, files)
    fix_in_place(tmp_path, code)
    for rel, want in example_files(RULES[code].fixed_example).items():
        assert _code_only((tmp_path / rel).read_text(encoding="utf-8")) == _code_only(want), f"{code}: {rel}"


def _golden_sections(example_findings: dict) -> dict:
    """``{code: the golden lines of its example's findings}`` (``path:line:col: message``)."""
    return {code: [f"{f['path']}:{f['line']}:{f['col']}: {f['message']}" for f in example_findings[code]] for code in CODES}


def _read_golden() -> dict:
    out: dict = {}
    code = None
    with open(GOLDEN, encoding="utf-8") as fh:
        for line in fh.read().splitlines():
            if line.startswith("[") and line.endswith("]"):
                code = line[1:-1]
                out[code] = []
            elif line and code is not None:
                out[code].append(line)
    return out


def test_golden_file_covers_every_rule(example_findings):
    """The golden file has a section for each rule and no other (``ASCENDIFY_UPDATE_GOLDEN=1``
    rewrites it from the current messages)."""
    if UPDATE:
        os.makedirs(os.path.dirname(GOLDEN), exist_ok=True)
        text = "\n".join(f"[{c}]\n" + "".join(ln + "\n" for ln in lines) for c, lines in _golden_sections(example_findings).items())
        with open(GOLDEN, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    assert sorted(_read_golden()) == sorted(CODES), "rerun with ASCENDIFY_UPDATE_GOLDEN=1 and review the diff"


PARSER_WORDED = frozenset({"SYN001"})  # the message quotes CPython's SyntaxError text
GOLDEN_PYTHON = (3, 11)  # the Python the golden was written with (make test's)


@pytest.mark.parametrize("code", CODES)
def test_messages_match_golden(code, example_findings):
    if UPDATE:
        pytest.skip("golden rewritten by test_golden_file_covers_every_rule")
    want = _read_golden().get(code)
    assert want is not None, f"no [{code}] in {GOLDEN}: rerun with ASCENDIFY_UPDATE_GOLDEN=1 and review the diff"
    if code in PARSER_WORDED and sys.version_info[:2] != GOLDEN_PYTHON:
        pytest.skip(f"{code} quotes Python's own parser message, worded per Python version (golden from {GOLDEN_PYTHON})")
    assert _golden_sections(example_findings)[code] == want, "a message changed: rerun with ASCENDIFY_UPDATE_GOLDEN=1 and review the diff"
