"""kb.chips and kb.versions (data: kb/data/chips.json, versions.json from tools/kb_versions.py)."""

from __future__ import annotations

import importlib.util
import os

import pytest

from ascendify.kb import chips as C
from ascendify.kb import versions as V
from tests.conftest import REFERENCE, reference_path

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


# ----------------------------------------------------------------------------- chips

@pytest.mark.parametrize("text,soc,family,bf16", [
    ("Ascend910B3", "Ascend910B3", "910B", True),
    ("910B4", "Ascend910B4", "910B", True),            # npu-smi Name column
    ("910B4-1", "Ascend910B4-1", "910B", True),
    ("Ascend910B", "Ascend910B", "910", False),        # digit-less 910B is 1st gen, not A2
    ("Ascend910ProA", "Ascend910ProA", "910", False),
    ("ascend910_9392", "Ascend910_9392", "910C", True),
    ("Ascend950PR", "Ascend950PR", "950", True),
    ("Ascend950DT_x", "Ascend950DT_x", "950", True),   # any Ascend950* (torch_npu prefix rule)
    ("310P3", "Ascend310P3", "310P", False),
    ("Ascend310P3vir02", "Ascend310P3vir02", "310P", False),
    ("Ascend310B1", "Ascend310B1", "310B", None),      # sources disagree → unknown
    ("Ascend310", "Ascend310", "310", None),
])
def test_chip_info(text, soc, family, bf16):
    info = C.chip_info(text)
    assert info is not None
    assert (info.soc_version, info.family, info.bf16) == (soc, family, bf16)
    assert "soc_versions.json" in info.source


@pytest.mark.parametrize("text", ["", "foo", "Ascend920", "910Z", "nvidia"])
def test_unknown_chip_is_none(text):
    assert C.chip_info(text) is None


def test_chip_capabilities():
    a2 = C.chip_info("Ascend910B1")
    assert a2.kernels_package == "910b" and a2.series == "Atlas A2" and a2.default_jit_compile is False
    assert C.chip_info("Ascend950DT").aclnn_only is True
    assert C.chip_info("Ascend310").torch_npu_supported is False
    assert C.chip_info("Ascend310P1").torch_npu_supported is True
    assert "sources disagree" in C.chip_info("Ascend310B2").bf16_note


def test_all_chips_and_families():
    allc = C.all_chips()
    socs = [c.soc_version for c in allc]
    assert len(socs) == len(set(socs)) == 35
    assert {c.family for c in allc} == {"910", "910B", "910C", "950", "310P", "310B", "310"}
    assert [c.soc_version for c in C.family_chips("a3")][:2] == ["Ascend910_9391", "Ascend910_9392"]
    assert C.family_code("a2") == "910B" and C.family_code("910b") == "910B" and C.family_code("Ascend910B") == "910"
    assert C.family_code("nope") is None


# ----------------------------------------------------------------------------- versions

def test_cann_ordering():
    vs = ["8.0.0", "8.0.RC2.alpha002", "8.1.RC1", "8.0.RC3", "8.0.RC2", "8.0.T6", "6.3.RC3.1", "6.3.RC3",
          "9.2.0-beta.2", "9.2.0"]
    assert sorted(vs, key=V.cann_key) == ["6.3.RC3", "6.3.RC3.1", "8.0.T6", "8.0.RC2.alpha002", "8.0.RC2",
                                          "8.0.RC3", "8.0.0", "8.1.RC1", "9.2.0-beta.2", "9.2.0"]
    assert V.cann_key("garbage") is None and V.cann_key("") is None
    assert V.normalize_cann("8.2.rc1") == "8.2.RC1"
    assert V.cann_release_of("8.0.RC2.alpha002") == "8.0.RC2"


def test_releases_matching():
    assert [r.torch_npu for r in V.releases_matching(cann="8.2.RC1")] == ["2.6.0", "2.5.1.post1", "2.1.0.post13"]
    assert [r.cann for r in V.releases_matching(torch_npu="2.7.1.post4")] == ["9.0.0"]
    assert [r.torch_npu for r in V.releases_matching(torch="2.7.1+cpu", cann="8.5.0")] == ["2.7.1.post2"]
    assert [r.torch_npu for r in V.releases_matching(cann="9.1.0", python="3.9")] == ["2.7.1.post8"]
    assert V.releases_matching(cann="7.9.RC1") == []


def test_lookup_torch_npu_fallbacks():
    exact = V.lookup_torch_npu("2.7.1.post4")
    assert exact.exact and exact.release.cann == "9.0.0" and exact.note is None
    newer = V.lookup_torch_npu("2.7.1.post11")
    assert not newer.exact and newer.release.torch_npu == "2.7.1.post8"
    assert "nearest known row: 2.7.1.post8 for CANN 9.1.0" in newer.note
    between = V.lookup_torch_npu("2.7.1.post3")
    assert between.release.torch_npu == "2.7.1.post2"
    future = V.lookup_torch_npu("2.15.0")
    assert future.release is None and "newer than the knowledge base" in future.note
    assert V.lookup_torch_npu("x.y").release is None


def test_lookup_cann_fallbacks():
    assert V.lookup_cann("8.3.RC1").exact
    newer = V.lookup_cann("9.2.0")
    assert not newer.exact and newer.release.cann == "9.1.0" and "newer than the knowledge base" in newer.note
    gap = V.lookup_cann("8.4.0")
    assert gap.release.cann == "8.3.RC1" and "nearest known: 8.3.RC1" in gap.note


def test_python_and_hdk_tables():
    assert V.python_versions("2.7.1+cpu") == ["3.9", "3.10", "3.11", "3.12", "3.13"]
    assert V.python_versions("2.9.1") == ["3.10", "3.11", "3.12", "3.13"]  # nearest 2.9 row
    assert V.python_versions("garbage") == []
    assert V.hdk_recommended("8.2.RC1", "910B") == {"driver": "25.0.rc1.1", "firmware": "7.7.0.1.231"}
    assert V.hdk_recommended("7.0.0", "310P") == {"driver": "23.0.1", "firmware": "7.1.0.4.220"}
    assert V.hdk_recommended("9.1.0", "910C") == {"hdk": "26.0.RC1"}
    assert V.hdk_recommended("8.5.0") is None


def test_suggest_for_mismatch_matches_issue_example():
    needed, options = V.suggest_for_mismatch("2.7.1.post4", "8.2.RC1", "2.7.1")
    assert needed == "9.0.0" and options[0] == "2.6.0"
    needed, options = V.suggest_for_mismatch("2.6.0", "8.5.0", "2.6.0")
    assert needed == "8.2.RC1" and options[0] == "2.6.0.post5"  # same torch first


def test_pypi_builds_and_inner_codes():
    assert "2.13.0" in V.pypi_builds_not_in_table()
    rows, others = V.torch_npu_for_torch("2.13.0")
    assert rows == [] and others == ["2.13.0"]
    assert V.inner_code("V100R001C23SPC002B212") == "C23" and V.inner_code("x") is None
    assert V.releases_for_inner_code("cann", "C22") == ["8.2.RC1"]


def test_builder_reproduces_committed_data(tmp_path):
    # inputs: the vendored research tables (tests/data/reference/data/derived/) and wheel folder list
    for name in ("soc_versions.json", "version_matrix.json", "cann_hdk_recommended.json"):
        reference_path("data", "derived", name)
    spec = importlib.util.spec_from_file_location("kb_versions", os.path.join(REPO, "tools", "kb_versions.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    written = mod.build(REFERENCE, str(tmp_path))
    assert sorted(os.path.basename(p) for p in written) == ["chips.json", "versions.json"]
    data_dir = os.path.join(REPO, "src", "ascendify", "kb", "data")
    for p in written:
        with open(p, "rb") as a, open(os.path.join(data_dir, os.path.basename(p)), "rb") as b:
            assert a.read() == b.read(), f"{os.path.basename(p)} is stale: run python tools/kb_versions.py"
