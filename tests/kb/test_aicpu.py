from __future__ import annotations

from ascendify.kb.aicpu import aicpu_dtype_rules, aicpu_reason


def test_rules_carry_source_and_canonical_dtypes():
    rules = aicpu_dtype_rules()
    dtype_rules = [r for r in rules if r["kind"] == "dtype"]
    # mstt aicpu_rules.yaml: 6 DataTypeCheckers for 7.0.RC1 and 5 for 8.0.RC1/7.0.0
    assert len(dtype_rules) == 11
    assert all(r["source"]["licence"] == "Apache-2.0" for r in dtype_rules)
    nonzero = [r for r in dtype_rules if r["op_types"] == ["nonzero"]]
    assert nonzero[0]["aicore_input_dtypes"] == ["float16", "bool", "bfloat16"]
    assert nonzero[0]["cann_versions"] == ["7.0.RC1"]


def test_float64_on_old_cann_is_aicpu_but_not_on_new():
    r = aicpu_reason("Add", ["DOUBLE"], "7.0.RC1")
    assert r is not None and "float64" in r and "7.0.RC1" in r and "mstt" in r
    assert aicpu_reason("Add", ["DOUBLE"], "8.0.RC1") is None


def test_per_op_rule_beats_generic():
    # Cast's own list lacks float64 even on 8.0.RC1
    r = aicpu_reason("Cast", ["torch.float64"], "8.0.RC1")
    assert r is not None and "'cast'" in r
    assert aicpu_reason("Cast", ["FLOAT16"], "8.0.RC1") is None


def test_unlisted_cann_uses_newest_older_set_and_says_so():
    r = aicpu_reason("Mul", ["UINT64"], "9.0.0")
    assert "9.0.0 is not listed" in r and "8.0.RC1/7.0.0" in r


def test_libtorch_npu_argsort_string():
    r = aicpu_reason("ArgSort", ["INT32"], None)
    assert r is not None and "ArgSort" in r and "libtorch_npu" in r
    assert aicpu_reason("ArgSort", ["FLOAT"], "8.0.0") is None


def test_profiler_cells_and_guides():
    r = aicpu_reason("NonZero", ["INT64;INT64"], "7.0.RC1")
    assert "float16, bool, bfloat16" in r
    # no dtype rule for NonZero under 8.x; the mstt replacement guide is the reason
    g = aicpu_reason("NonZero", ["INT64"], "8.0.0")
    assert g is not None and "guide" in g.lower() or "replace" in g.lower()
    assert aicpu_reason("", ["FLOAT"]) is None
    assert aicpu_reason("MatMul", ["FLOAT16", "N/A"], "8.0.RC1") is None
