"""The fix policy is rule metadata (issue 19): each rule's ``policy`` (its own, or its TOML file's
default) names policies that ``semantic/policy.py`` knows, and that module names no rule."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ascendify.rules.registry import CATEGORIES, Rule, load_rules
from ascendify.semantic.policy import POLICIES, has_policy

POLICY_PY = Path(__file__).resolve().parents[2] / "src" / "ascendify" / "semantic" / "policy.py"
_CODE = re.compile(r"^(%s)(\d{3})?$" % "|".join(CATEGORIES))


def test_every_policy_name_in_the_rule_data_is_known():
    rules = load_rules()
    unknown = {code: [p for p in r.policy if p not in POLICIES] for code, r in rules.items()}
    assert {c: u for c, u in unknown.items() if u} == {}
    assert all(isinstance(r.policy, tuple) for r in rules.values())


def test_the_data_gives_each_policy_to_the_rules_it_had():
    rules = load_rules()
    branch = {c for c, r in rules.items() if "branch" in r.policy}
    assert branch == {c for c in rules if c[:3] in ("DEV", "AMP", "DST", "MEM", "EXT")}  # as before the move
    assert {c for c, r in rules.items() if "library" in r.policy} == {c for c in rules if c.startswith("EXT")}
    assert {c for c, r in rules.items() if "keeps-import" in r.policy} == {"IMP001"}
    assert {c for c, r in rules.items() if "selector" in r.policy} == {"DEV023", "DEV024"}  # impl == 'cuda' is no device
    assert rules["DTY001"].policy == () and rules["SYN001"].policy == ()  # no branch policy: reported wherever they are


def test_has_policy_reads_the_rules_given():
    rules = {"XYZ001": Rule("XYZ001", "n", "error", "m", "s", "w", "e", "f", "src", policy="branch")}
    assert rules["XYZ001"].policy == ("branch",)
    assert has_policy(rules, "XYZ001", "branch") and not has_policy(rules, "XYZ001", "library")
    assert not has_policy(rules, "ABC001", "branch")  # not a known rule: no policy


def test_policy_module_names_no_rule():
    tree = ast.parse(POLICY_PY.read_text(encoding="utf-8"))
    named = sorted({n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and _CODE.match(n.value)})
    assert named == []
    assert _CODE.match("EXT") and _CODE.match("DEV026") and not _CODE.match("DEVICE")  # the detector works
