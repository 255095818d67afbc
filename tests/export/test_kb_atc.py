"""The ATC ONNX operator table (kb/data/atc_onnx_ops.json) and its checks."""

from __future__ import annotations

from ascendify.kb.atc import check_ops, check_opset, load_table, op_info


def test_table_has_provenance_and_known_ops():
    t = load_table()
    assert "hiascend" in t["_sources"]["cann-8.0.0"] and t["opset_verified"] is False
    assert op_info("Conv")["listed_in"] == ["cann-8.0.0", "cann-5.0.4"]
    assert op_info("ArgMax")["list_spelling"] == "Argmax"
    assert op_info("Einsum")["listed_in"] == ["cann-8.0.0"]
    assert op_info("Loop")["listed_in"] == []
    assert op_info("NoSuchOp") is None


def test_check_ops_levels():
    f = {x.op_type: x for x in check_ops([("", "Relu", "r"), ("", "Loop", "l1"), ("", "Loop", "l2"),
                                          ("com.microsoft", "FusedGemm", "g"), ("", "NonZero", "nz")])}
    assert "Relu" not in f
    assert f["Loop"].level == "warning" and f["Loop"].count == 2 and "E16002" in f["Loop"].message
    assert f["FusedGemm"].level == "error"
    assert f["NonZero"].level == "warning" and "data" in f["NonZero"].message


def test_opset_rules():
    assert check_opset(11) == [] and check_opset(17) == []
    assert check_opset(18)[0].level == "warning"
    assert check_opset(7)[0].level == "warning"
