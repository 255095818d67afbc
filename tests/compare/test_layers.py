"""`ascendify compare --layers`: fp32 vs emulated force_fp16, first invalid / overflow node, NPU dumps."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from tests.compare.helpers import run

OVERFLOW_NODE = "/bert/encoder/layer.1/intermediate/dense/Add"


def _export_bert(factory, path):
    import torch

    m = factory()
    ids = torch.randint(0, 100, (1, 16), generator=torch.Generator().manual_seed(1))
    mask = torch.ones(1, 16, dtype=torch.long)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (ids, mask), str(path), dynamo=False, opset_version=11,
                          input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state", "pooler_output"])
    return {"input_ids": ids.numpy(), "attention_mask": mask.numpy()}


@pytest.fixture(scope="module")
def bert_models(tmp_path_factory):
    pytest.importorskip("transformers")
    from tests.compare.toy_models import bert_overflow, bert_plain

    d = tmp_path_factory.mktemp("bert")
    feeds = _export_bert(bert_overflow, d / "bert_of.onnx")
    _export_bert(bert_plain, d / "bert.onnx")
    (d / "data").mkdir()
    np.savez(d / "data" / "s0.npz", **feeds)
    return d


def test_layers_names_first_overflowing_node(bert_models, tmp_path, capsys):
    d = bert_models
    keep = tmp_path / "keep.txt"
    rj = tmp_path / "layers.json"
    code, out, err = run(["compare", "--layers", str(d / "bert_of.onnx"), "--data", str(d / "data"),
                          "--keep-dtype-file", str(keep), "--json", str(rj)], capsys)
    assert code == 1, err  # network outputs break in fp16
    assert "first fp16 overflow (|x| > 65504): #" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("first fp16 overflow"))
    assert f" {OVERFLOW_NODE} (Add)" in line
    rep = json.loads(rj.read_text())
    assert rep["mode"] == "fp16-emulation"
    assert rep["first_fp16_overflow"]["node"] == OVERFLOW_NODE
    assert rep["first_fp16_overflow"]["max_abs_golden"] > 65504
    assert rep["first_invalid"]["node"] == OVERFLOW_NODE
    # every node before it stays within fp16 range and passes
    before = [r for r in rep["rows"] if r["index"] < rep["first_invalid"]["index"]]
    assert before and all(not r["fp16_overflow"] and r["status"] == "PASS" for r in before)
    kept = keep.read_text().splitlines()
    assert kept[0] == OVERFLOW_NODE
    assert all("layer.1" in k for k in kept)
    assert rep["network_outputs"]["last_hidden_state"]["failed"]
    # keeping those nodes in fp32 restores the outputs
    assert rep["network_outputs_with_keep_dtype"]["last_hidden_state"]["failed"] == []
    assert rep["network_outputs_with_keep_dtype"]["last_hidden_state"]["cosine"] > 0.999


def test_layers_clean_model_has_no_overflow(bert_models, tmp_path, capsys):
    d = bert_models
    rj = tmp_path / "layers.json"
    code, out, err = run(["compare", "--layers", str(d / "bert.onnx"), "--data", str(d / "data"), "--json", str(rj)], capsys)
    assert code == 0, out + err
    rep = json.loads(rj.read_text())
    assert rep["first_fp16_overflow"] is None
    assert rep["keep_dtype"] == []
    assert rep["network_outputs"]["last_hidden_state"]["cosine"] > 0.999
    assert "first fp16 overflow (|x| > 65504): none" in out


def test_emulation_rounds_to_fp16():
    import onnx
    from onnx import helper

    from ascendify.compare.layers import emulate_fp16
    from ascendify.compare.runner import ort_session

    g = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["y"], name="mul")], "g",
                          [helper.make_tensor_value_info("x", 1, [3])], [helper.make_tensor_value_info("y", 1, [3])],
                          [onnx.numpy_helper.from_array(np.array([1.0, 1.0, 1000.0], np.float32), "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 8
    x = np.array([1.0001, 70000.0 / 1000.0, 70.0], np.float32)
    y16 = ort_session(emulate_fp16(m, {"x", "y"})).run(None, {"x": x})[0]
    assert y16[0] == np.float32(np.float16(1.0001))       # fp16 precision
    assert y16[1] == np.float32(np.float16(70.0))
    assert np.isinf(y16[2])                                # 70000 > 65504 overflows
    y32 = ort_session(emulate_fp16(m, {"x", "y"}, keep=frozenset({"mul"}))).run(None, {"x": x})[0]
    assert y32[2] == pytest.approx(70000.0)                # kept node stays fp32


def _cnn_onnx(path):
    import torch

    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(4, 4, 3, padding=1),
                            torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 8 * 8, 5)).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (torch.randn(1, 3, 8, 8),), str(path), dynamo=False, opset_version=11,
                          input_names=["x"], output_names=["y"])


def test_npu_dump_folder_pairs_by_node_name(tmp_path, capsys):
    import onnx

    from ascendify.compare.layers import name_nodes, with_all_outputs
    from ascendify.compare.runner import ort_session

    _cnn_onnx(tmp_path / "cnn.onnx")
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    m = onnx.load(str(tmp_path / "cnn.onnx"))
    name_nodes(m)
    s = ort_session(with_all_outputs(m))
    golden = dict(zip([o.name for o in s.get_outputs()], s.run(None, {"x": x})))
    dump = tmp_path / "dump"
    dump.mkdir()
    perturb = m.graph.node[2]  # second Conv: from here on the "NPU" differs
    started = False
    for node in m.graph.node:
        started |= node.name == perturb.name
        out = golden[node.output[0]]
        val = out + np.float32(0.5) * np.abs(out).max() * (started and out.dtype == np.float32)
        safe = node.name.replace("/", "_").replace(".", "_")
        np.save(dump / f"{safe}.0.1700000000000000.npy", val)   # msit-style <node>.<idx>.<timestamp>
    rj = tmp_path / "l.json"
    code, out, err = run(["compare", "--layers", str(tmp_path / "cnn.onnx"), "--data", str(tmp_path / "x.npy"),
                          "--npu-dump", str(dump), "--json", str(rj)], capsys)
    rep = json.loads(rj.read_text())
    assert rep["mode"] == "npu-dump"
    assert rep["first_invalid"]["node"] == perturb.name, out
    assert len(rep["rows"]) == len(m.graph.node)
    assert code == 1


def test_layers_csv_has_msit_columns(bert_models, tmp_path, capsys):
    import csv

    from ascendify.compare.layers import MSIT_CSV_HEADER

    d = bert_models
    out = tmp_path / "result.csv"
    run(["compare", "--layers", str(d / "bert_of.onnx"), "--data", str(d / "data"), "--csv", str(out)], capsys)
    rows = list(csv.reader(out.read_text().splitlines()))
    assert ",".join(rows[0]) == MSIT_CSV_HEADER
    assert MSIT_CSV_HEADER.startswith("Index,OpType,NPUDump,DataType,Address,GroundTruth,DataType,Address,TensorIndex")
    first_err = next(r for r in rows[1:] if r[-1] == "YES")
    assert first_err[2] == OVERFLOW_NODE and first_err[10] == "YES" and first_err[3] == "float16"
    assert first_err[8] == f"{OVERFLOW_NODE}:output:0"
    outputs = [r for r in rows[1:] if r[23] == "YES"]
    assert len(outputs) == 2


def test_layers_csv_via_output_file_and_without(tmp_path, capsys):
    """--layers -o x.csv writes msit's CSV there and prints nothing; csv without -o is one line, exit 2."""
    import csv

    from ascendify.compare.layers import MSIT_CSV_HEADER

    _cnn_onnx(tmp_path / "cnn.onnx")
    np.save(tmp_path / "x.npy", np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32))
    f = tmp_path / "x.csv"
    code, out, err = run(["compare", "--layers", str(tmp_path / "cnn.onnx"), "--data", str(tmp_path / "x.npy"), "-o", str(f)], capsys)
    assert code == 0, err
    assert out == ""
    rows = list(csv.reader(f.read_text().splitlines()))
    assert ",".join(rows[0]) == MSIT_CSV_HEADER and len(rows) > 2
    code, out, err = run(["compare", "--layers", str(tmp_path / "cnn.onnx"), "--data", str(tmp_path / "x.npy"), "--format", "csv"], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "-o FILE.csv" in err
