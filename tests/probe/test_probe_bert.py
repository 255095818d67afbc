"""Probe a real architecture nobody here wrote (transformers BERT, small config, random weights,
no download) and check every classification in the report against the raw public data."""

from __future__ import annotations

import csv

import pytest

pytest.importorskip("transformers")
yaml = pytest.importorskip("yaml")

from ascendify.probe.run import probe_model  # noqa: E402
from tests.conftest import reference_path  # noqa: E402

RELEASE = "2.7.1.post11"
CSV = f"aten_op_classification_torch2.7.1_torch_npu{RELEASE}.csv"


@pytest.fixture(scope="module")
def report():
    return probe_model("tests.probe.models:bert_tiny", ["input_ids:2,16:int64:0-128", "attention_mask:2,16:int64:1-2"],
                       [], vary="seq", train=True, torch_npu=RELEASE, chip="Ascend910B3")


@pytest.fixture(scope="module")
def raw():
    # the raw public data, vendored in tests/data/reference (README.md there gives provenance)
    with open(reference_path("data", "torch_npu_wheels", RELEASE, "npu_native_functions_by_codegen.yaml"),
              encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    reg = {}
    for key in ("supported", "symint", "quant", "autograd"):
        for e in doc.get(key) or []:
            name = (e["func"] if isinstance(e, dict) else e).split("(")[0]
            if isinstance(e, dict) and e.get("sparse") and not e.get("impl_ns"):
                continue
            impl = set(p.strip() for p in e.get("impl_ns", "").split(",") if p.strip()) if isinstance(e, dict) else set()
            reg.setdefault(name, set()).update(impl or {"torch_npu_core"})
    with open(reference_path("data", "derived", CSV), encoding="utf-8", newline="") as fh:
        table = {r["aten_overload"]: r for r in csv.DictReader(fh)}
    return reg, table


def test_bert_report_lists_ops(report):
    ops = {r["op"] for r in report["classification"]["rows"]}
    for op in ("embedding", "addmm", "native_layer_norm", "gelu", "bmm", "embedding_dense_backward", "native_layer_norm_backward"):
        assert any(o == op or o.startswith(op + ".") for o in ops), op
    assert len(ops) > 30
    assert report["error"] is None
    assert report["dynamic"]["atc"]["mode"] == "dynamic_dims"
    assert '--dynamic_dims="16,16;32,32"' in report["dynamic"]["atc"]["atc"]
    # SDPA decomposes on the CPU; torch_npu registers its own kernel for it → an info finding says so
    over = [f for f in report["classification"]["findings"] if f["kind"] == "npu_override"]
    assert any("scaled_dot_product_attention" in f["message"] for f in over)


def test_every_classification_matches_raw_data(report, raw):
    reg, table = raw
    from ascendify.kb import ops as kbops
    disagree = kbops.load_release(RELEASE).meta["disagreements"]
    checked = 0
    for row in report["classification"]["rows"]:
        op = row["op"]
        if op in reg:
            assert row["class"] == "npu_kernel", op
            assert set(row["npu_impl"].split("+")) == reg[op], op
        else:
            assert row["class"] != "npu_kernel", op
            if op in table:
                expected = table[op]["class"]
                if op in disagree:  # both sources kept; the KB's primary class is the dispatcher-checked one
                    assert disagree[op]["research_csv"] == expected and disagree[op]["primary"] == row["class"]
                else:
                    assert row["class"] == expected, (op, row["class"], expected)
            else:
                assert row["class"] == "unknown", op
        checked += 1
    assert checked == len(report["classification"]["rows"]) > 30
    # every CPU-fallback finding corresponds to a cpu_fallback row of the raw CSV
    for f in report["classification"]["findings"]:
        if f["kind"] == "cpu_fallback":
            assert table[f["op"]]["class"] == "cpu_fallback"
