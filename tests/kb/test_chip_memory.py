"""Device-memory table of the chips KB (kb/data/chip_memory.toml, kb.chips.hbm_*)."""

from __future__ import annotations

import json
import os

import pytest

from ascendify.kb import chips

from .conftest import ROOT

GiB = 1 << 30
DATA = os.path.join(ROOT, "src", "ascendify", "kb", "data")
DOC = os.path.join(ROOT, "docs", "chips.md")


def _records():
    return chips._memory()["soc"]


def test_every_soc_in_chips_json_has_an_entry():
    socs = json.load(open(os.path.join(DATA, "chips.json"), encoding="utf-8"))["soc_versions"]
    recs = _records()
    assert sorted(recs) == sorted(socs)


@pytest.mark.parametrize("soc", sorted(json.load(open(os.path.join(DATA, "chips.json"),
                                                        encoding="utf-8"))["soc_versions"]))
def test_entry_has_source_or_reason(soc):
    rec = _records()[soc]
    assert isinstance(rec.get("verified"), bool)
    for url in rec.get("sources", []):
        assert url.startswith("https://"), url
    if rec.get("mib") is None:
        assert rec["verified"] is False and rec.get("reason"), soc   # explicit null with reason
    else:
        assert rec["mib"] > 0 and rec.get("sources"), soc            # every number has a URL
        if not rec["verified"]:
            assert rec.get("reason"), soc                            # and says why it is unverified


def test_hbm_bytes_known_values():
    assert chips.hbm_bytes("Ascend910B3") == 64 * GiB
    assert chips.hbm_bytes("910B3") == 64 * GiB              # npu-smi spelling
    assert chips.hbm_bytes("ascend910b4") == 32 * GiB
    assert chips.hbm_bytes("910B4-1") == 64 * GiB
    assert chips.hbm_bytes("Ascend910A") == 32 * GiB
    assert chips.hbm_bytes("Ascend310P3") == 24 * GiB
    assert chips.hbm_bytes("Ascend950DT") == 144 * GiB
    assert chips.hbm_bytes("Ascend950PR_9582") == 128 * GiB  # any Ascend950PR* is a 950PR
    assert chips.hbm_verified("910B3") and not chips.hbm_verified("Ascend950DT")


def test_a3_per_die_and_per_card():
    assert chips.hbm_bytes("Ascend910_9392") == 64 * GiB     # one die = one torch_npu device
    assert chips.card_hbm_bytes("Ascend910_9392") == 128 * GiB
    assert chips.card_hbm_bytes("Ascend910B3") == 64 * GiB   # one device per card
    row = next(r for r in chips.memory_table() if r["soc_version"] == "Ascend910_9362")
    assert row["dies_per_card"] == 2 and row["card_bytes"] == 2 * row["hbm_bytes"]


def test_unknown_is_none_with_reason():
    assert chips.hbm_bytes("Ascend910ProB") is None
    assert chips.hbm_verified("Ascend910ProB") is False
    assert chips.hbm_source("Ascend910ProB").startswith("unknown: ")
    assert chips.hbm_bytes("Ascend310B1") is None
    assert chips.hbm_bytes("no-such-chip") is None and chips.hbm_source("no-such-chip") == ""


def test_hbm_source():
    assert chips.hbm_source("910B2").split()[0].startswith("https://")
    assert "unverified" not in chips.hbm_source("910B2")
    assert "(unverified: family value" in chips.hbm_source("Ascend910_9391")


def test_memory_table_covers_all_chips_in_order():
    table = chips.memory_table()
    assert [r["soc_version"] for r in table] == [c.soc_version for c in chips.all_chips()]
    known = [r for r in table if r["hbm_bytes"] is not None]
    assert all(r["sources"] for r in known)
    assert {r["family"] for r in known} >= {"910", "910B", "910C", "950", "310P"}


def test_doc_table_matches_data():
    text = open(DOC, encoding="utf-8").read()
    start, end = "<!-- chip-memory:start -->", "<!-- chip-memory:end -->"
    block = text[text.index(start) + len(start):text.index(end)]
    assert block == "\n" + chips.memory_table_markdown(), "run: python tools/chip_memory_doc.py"
