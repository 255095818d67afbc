from __future__ import annotations

import pytest

from ascendify.kb import ops


def test_releases_known():
    rels = ops.releases()
    assert rels[0] == "2.1.0.post17" and rels[-1] == "2.14.0" and len(rels) == 13


@pytest.mark.parametrize("rel", ["2.1.0.post17", "2.7.1.post11", "2.14.0"])
def test_linalg_inv_ex_is_cpu_fallback(rel):
    r = ops.op_support("aten::linalg_inv_ex", rel)
    assert r["class"] == "cpu_fallback" and r["cpu_fallback"] is True
    assert "npu_native_functions_by_codegen.yaml" in r["source"] and "VariableFallbackKernel" in r["source"]
    assert r["warning"] is None


def test_nanmean_out_kernel_not_monotone():
    # reference/op-support-and-versions.md §2.3: nanmean.out op_api in 2.7.1.post11, not in 2.8.0.post5
    assert ops.op_support("nanmean.out", "2.7.1.post11")["npu_impl"] == "op_api"
    assert ops.op_support("nanmean.out", "2.8.0.post5")["class"] != "npu_kernel"
    assert ops.op_support("aten::nanmean.default", "2.7.1.post11")["class"] == "composite_implicit"


def test_version_resolution_warns_with_both_names():
    r = ops.op_support("bmm", "2.7.1.post4")
    assert r["torch_npu"] == "2.7.1.post11" and "2.7.1.post4" in r["warning"] and "2.7.1.post11" in r["warning"]
    r = ops.op_support("bmm", "2.2.0")
    assert r["torch_npu"] == "2.1.0.post17" and "nearest" in r["warning"]
    with pytest.raises(ValueError):
        ops.resolve_release("banana")


def test_unknown_op_is_unknown_not_supported():
    r = ops.op_support("aten::definitely_not_an_op", "2.7.1.post11")
    assert r["class"] == "unknown" and r["cpu_fallback"] is False


def test_bare_release_line_maps_without_a_warning():
    rel, note = ops.resolve_release("2.7.1")
    assert rel.startswith("2.7.1.post") and note is None
    rel, note = ops.resolve_release("2.7.1.post99")
    assert rel.startswith("2.7.1.post") and "not in the KB" in note
