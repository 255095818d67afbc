"""What a new user hit trying every command: one --input range syntax, -o for compare's CSV,
one-line usage errors (rules --category, fix modes), explicit non-Python paths in scan,
seeded factories, fit's capped --batch auto and its unknown-chip hint."""

from __future__ import annotations

import json
import os

import pytest

from ascendify.errors import AscendifyError
from tests.cli_util import run_cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(REPO, "examples", "cuda_project")


# ----------------------------------------------------------------------------- 1. --input value ranges
@pytest.mark.parametrize("text,want", [
    ("0..999", (0.0, 999.0, True)),
    ("-1..1", (-1.0, 1.0, True)),
    ("-2.5..1e-1", (-2.5, 0.1, True)),
    ("0-1000", (0.0, 1000.0, False)),
    ("0.5-2.5", (0.5, 2.5, False)),
    (" 3..3 ", (3.0, 3.0, True)),
])
def test_value_range_both_spellings(text, want):
    from ascendify.probe.spec import parse_value_range

    assert tuple(parse_value_range(text)) == want


@pytest.mark.parametrize("text,why", [
    ("-1-1", "must be lo..hi"),        # negative bounds only with ..
    ("1..0", "is empty"),
    ("5-5", "is empty"),               # low-high excludes high
    ("a..b", "must be lo..hi"),
    ("0~9", "must be lo..hi"),
])
def test_value_range_rejects(text, why):
    from ascendify.probe.spec import parse_value_range

    with pytest.raises(ValueError, match=why):
        parse_value_range(text)


def test_probe_and_fit_parser_takes_both_spellings_with_the_same_integers():
    from ascendify.probe.spec import SpecError, parse_spec

    old = parse_spec("ids:2,16:int64:0-1000")
    new = parse_spec("ids:2,16:int64:0..999")
    assert (old.low, old.high) == (new.low, new.high) == (0, 1000)
    neg = parse_spec("t:4:int32:-3..3")
    assert (neg.low, neg.high) == (-3, 4)
    f = parse_spec("x:64:float32:-1..1")
    assert f.float_range == (-1.0, 1.0)
    t = f.make()
    assert float(t.min()) >= -1.0 and float(t.max()) < 1.0 and float(t.min()) < 0.0
    ids = new.make()
    assert int(ids.min()) >= 0 and int(ids.max()) <= 999
    with pytest.raises(SpecError, match="integer bounds"):
        parse_spec("ids:2:int64:0.5..3")
    with pytest.raises(SpecError, match=r"lo\.\.hi"):
        parse_spec("ids:2:int64:-1-1")


def test_export_parser_takes_both_spellings():
    from ascendify.export.atc import parse_input

    assert parse_input("ids:2,16:int64:0..999").value_range == (0, 999)
    assert parse_input("ids:2,16:int64:0-1000").value_range == (0, 999)  # old: high excluded
    assert parse_input("x:1,3:float32:-1..1").value_range == (-1.0, 1.0)
    assert parse_input("x:1,3:float32:0-1").value_range == (0.0, 1.0)
    with pytest.raises(AscendifyError, match=r"lo\.\.hi"):
        parse_input("x:1,3:float32:-1-1")


def test_one_range_parser_is_shared():
    """export's parser delegates to probe's, so both give the same error text."""
    from ascendify.export.atc import parse_input
    from ascendify.probe.spec import SpecError, parse_spec

    with pytest.raises(AscendifyError) as e1:
        parse_input("x:2:float32:1..0")
    with pytest.raises(SpecError) as e2:
        parse_spec("x:2:float32:1..0")
    assert str(e1.value) == str(e2.value)


def test_help_texts_name_the_canonical_range():
    for cmd in ("probe", "fit", "export"):
        r = run_cli(cmd, "--help")
        assert "lo..hi" in r.out and "low-high]" not in r.out, cmd
