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


KIND_RULES = [c for c in CODES if RULES[c].file_suffixes]
PROJECT_RULES = [c for c in CODES if RULES[c].project]  # tested in tests/semantic/test_project.py
CODES = [c for c in CODES if c not in KIND_RULES and c not in PROJECT_RULES]


def test_rules_have_checks_and_checks_have_rules():
    implemented = set(NODE_CHECKS) | set(FILE_CHECKS)
    assert sorted(set(CODES) - implemented) == []
    assert sorted(implemented - set(RULES) - set(KIND_RULES)) == []


@pytest.mark.parametrize("code", KIND_RULES)
def test_file_kind_rule(code, tmp_path):
    """A file-kind rule reports each file with its suffixes once, at line 1, and nothing else."""
    from ascendify.config import Settings
    from ascendify.scan.engine import discover, scan_files

    for suf in RULES[code].file_suffixes:
        (tmp_path / f"kernel{suf}").write_text("__global__ void k() {}\n")
    (tmp_path / "kernel.cpp").write_text("int x;\n")
    (tmp_path / "ok.py").write_text("import torch\n")
    s = Settings(select=[code]).validate()
    res = scan_files(discover([str(tmp_path)], s, lambda p, m: None), s, None, jobs=1)
    assert sorted((os.path.basename(f.path), f.line) for f in res.findings) == sorted((f"kernel{suf}", 1) for suf in RULES[code].file_suffixes)
    off = Settings(ignore=[code]).validate()
    assert not any(f.code == code for f in scan_files(discover([str(tmp_path)], off, lambda p, m: None), off, None, jobs=1).findings)


@pytest.mark.parametrize("code", CODES + KIND_RULES + PROJECT_RULES)
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
        # no agnostic golden: this rule has no agnostic fix, so nothing may change
        with open(path, encoding="utf-8", newline="") as fh:
            assert text == fh.read(), f"{code} changed the file for --target agnostic but has no {golden}"
        return
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
