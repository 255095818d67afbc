"""Every rule: documented, implemented, a positive and a negative fixture, golden fixes.

Fixtures live in ``cases/``:

* ``CODE.py``: each line that must be reported carries ``# expect: CODE``;
  nothing else in the file may be reported for CODE;
* ``CODE_ok.py``: code that looks alike but is fine; CODE must report nothing;
* ``CODE.npu.py`` / ``CODE.agnostic.py``: for fixable rules, the exact result
  of fixing ``CODE.py`` (all fixes of that rule, unsafe included) for that
  target.  Set ``ASCENDIFY_REGOLD=1`` to (re)write them, then review the diff.
"""

from __future__ import annotations

import ast
import os

import pytest

from ascendify.rules.registry import FILE_CHECKS, NODE_CHECKS, load_checks, load_rules

from .helpers import CASES, expected_lines, findings_for, fixed_text

load_checks()
RULES = load_rules()
CODES = [c for c in RULES if not c.startswith("SYN")]


def test_rules_have_checks_and_checks_have_rules():
    implemented = set(NODE_CHECKS) | set(FILE_CHECKS)
    assert sorted(set(CODES) - implemented) == []
    assert sorted(implemented - set(RULES)) == []


@pytest.mark.parametrize("code", CODES)
def test_rule_page_complete(code):
    r = RULES[code]
    for field in ("name", "message", "summary", "why", "example", "fix", "source"):
        assert getattr(r, field).strip(), f"{code} lacks {field}"
    assert r.severity in ("error", "silent", "warning", "info")
    assert r.fixable in ("safe", "unsafe", "")
    ast.parse(r.example)  # examples are real code
    if r.fixed_example:
        ast.parse(r.fixed_example)


@pytest.mark.parametrize("code", CODES)
def test_positive(code):
    path = os.path.join(CASES, f"{code}.py")
    assert os.path.exists(path), f"missing positive fixture {path}"
    want = expected_lines(path, code)
    assert want, f"{path} marks no line with '# expect: {code}'"
    got = sorted(f.line for f in findings_for(path, code))
    assert got == want


@pytest.mark.parametrize("code", CODES)
def test_negative(code):
    path = os.path.join(CASES, f"{code}_ok.py")
    assert os.path.exists(path), f"missing negative fixture {path}"
    assert [(f.line, f.message) for f in findings_for(path, code)] == []


FIXABLE = [(c, t) for c in CODES if RULES[c].fixable for t in ("npu", "agnostic")]


@pytest.mark.parametrize("code,target", FIXABLE)
def test_golden_fix(code, target):
    path = os.path.join(CASES, f"{code}.py")
    golden = os.path.join(CASES, f"{code}.{target}.py")
    text = fixed_text(path, code, target)
    if os.environ.get("ASCENDIFY_REGOLD"):
        with open(path, encoding="utf-8", newline="") as fh:
            unchanged = fh.read() == text
        if unchanged and target == "agnostic":  # no agnostic fix: no golden
            if os.path.exists(golden):
                os.unlink(golden)
        else:
            with open(golden, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
    if target == "agnostic" and not os.path.exists(golden):
        pytest.skip(f"{code} has no agnostic fix")
    with open(golden, encoding="utf-8", newline="") as fh:
        assert text == fh.read()
    ast.parse(text)
    # idempotent: fixing the fixed text changes nothing more
    tmp = golden + ".again.tmp"
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        assert fixed_text(tmp, code, target) == text
    finally:
        os.unlink(tmp)
