"""The pattern families of the semantic model (issue 10), each a small project in ``families/``.

For every family folder:

* the scan (all rules) reports exactly the lines marked ``# expect: CODE[, CODE]`` in its files —
  no more (a guard that makes code dead, NPU-aware code, another accelerator's branch and
  CUDA-only-by-intent code are the negative cases) and no fewer;
* ``fix --output`` with the safe fixes gives, for each target, exactly the golden copy
  ``families/<name>.npu/`` / ``families/<name>.agnostic/`` (write them with ``ASCENDIFY_REGOLD=1``,
  then read them); every migrated file re-parses, and fixing the copy again changes nothing.
"""

from __future__ import annotations

import ast
import os
import re
import shutil

import pytest

from ascendify.config import Settings
from ascendify.fix.run import fix_tree
from ascendify.scan.engine import discover, scan_files

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "families")
FAMILIES = sorted(d for d in os.listdir(HERE) if os.path.isdir(os.path.join(HERE, d)) and "." not in d)
EXPECT = re.compile(r"#.*\bexpect:\s*([A-Z]{3}\d{3}(?:\s*,\s*[A-Z]{3}\d{3})*)")
TARGETS = ("npu", "agnostic")


def _py_files(root: str) -> list:
    out = []
    for dirpath, _dirs, files in os.walk(root):
        for fn in files:
            if fn.endswith(".py"):
                out.append(os.path.relpath(os.path.join(dirpath, fn), root).replace(os.sep, "/"))
    return sorted(out)


def expected(root: str) -> list:
    out = []
    for rel in _py_files(root):
        with open(os.path.join(root, rel), encoding="utf-8") as fh:
            for i, line in enumerate(fh, 1):
                m = EXPECT.search(line)
                if m:
                    out.extend((rel, i, c.strip()) for c in m.group(1).split(","))
    return sorted(out)


def scan(root: str, target: str = "npu"):
    s = Settings(select=["ALL"], target=target).validate()
    old = os.getcwd()
    os.chdir(root)
    try:
        res = scan_files(discover(["."], s, lambda p, m: None), s, None, jobs=1)
    finally:
        os.chdir(old)
    return s, res


def _rel(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


@pytest.mark.parametrize("family", FAMILIES)
def test_family_findings(family):
    root = os.path.join(HERE, family)
    _s, res = scan(root)
    got = sorted((_rel(f.path), f.line, f.code) for f in res.findings)
    assert got == expected(root)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("family", FAMILIES)
def test_family_golden_fix(family, target, tmp_path):
    root = os.path.join(HERE, family)
    s, res = scan(root, target)
    out = tmp_path / "out"
    old = os.getcwd()
    os.chdir(root)
    try:
        run = fix_tree((".",), res, s, "output", str(out), str(tmp_path / "changes.csv"))
    finally:
        os.chdir(old)
    assert not run.errors
    golden = os.path.join(HERE, f"{family}.{target}")
    if os.environ.get("ASCENDIFY_REGOLD"):
        shutil.rmtree(golden, ignore_errors=True)
        for rel in _py_files(str(out)):
            os.makedirs(os.path.dirname(os.path.join(golden, rel)), exist_ok=True)
            shutil.copyfile(out / rel, os.path.join(golden, rel))
    assert _py_files(str(out)) == _py_files(golden)
    for rel in _py_files(golden):
        text = (out / rel).read_text(encoding="utf-8")
        ast.parse(text, rel)
        with open(os.path.join(golden, rel), encoding="utf-8") as fh:
            assert text == fh.read(), f"{family}.{target}/{rel} differs from the golden copy"
    # a second fix of the migrated copy changes nothing
    s2, res2 = scan(str(out), target)
    os.chdir(str(out))
    try:
        again = fix_tree((".",), res2, s2, "diff")
    finally:
        os.chdir(old)
    assert again.diff == "", f"fixing the {target} copy again changes it:\n{again.diff}"
