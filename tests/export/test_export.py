"""`ascendify export`: ONNX + validation + the exact atc command (ATC facts: accuracy-profiling-atc.md §1)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from tests.compare.helpers import run

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def normalize_by_hand(x01: np.ndarray) -> np.ndarray:
    """torchvision-style Normalize on an NCHW float tensor in [0, 1], written out."""
    m = np.array(MEAN, np.float32).reshape(1, 3, 1, 1)
    s = np.array(STD, np.float32).reshape(1, 3, 1, 1)
    return (x01 - m) / s


def _ort(path, feeds):
    import onnxruntime as ort

    return ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)


def _cos(a, b):
    a = a.astype(np.float64).ravel()
    b = b.astype(np.float64).ravel()
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_cnn_normalize_dynamic_batch_exact_atc_command(tmp_path, capsys):
    import torch

    from tests.export.toy_models import cnn

    out = tmp_path / "cnn.onnx"
    code, text, err = run(["export", "tests.export.toy_models:cnn", "--input", "x:-1,3,32,32:float32:0..1",
                           "--dynamic-batch", "1,2,4,8", "--normalize", "0.485,0.456,0.406;0.229,0.224,0.225",
                           "--chip", "Ascend910B3", "--onnx", str(out)], capsys)
    assert code == 0, text + err
    prefix = str(tmp_path / "cnn")
    expected = (f'atc --model={out} --framework=5 --output={prefix} --soc_version=Ascend910B3 --input_format=NCHW '
                f'--input_shape="x:-1,3,32,32" --dynamic_batch_size="1,2,4,8" --precision_mode=force_fp16 '
                f'--output_type=FP32')
    assert expected in text.splitlines()
    # the script names the files beside it and runs from its own folder (test_export_files.py runs it)
    script = (tmp_path / "cnn.atc.sh").read_text().splitlines()
    assert script[-2:] == ['cd "$(dirname "$0")"', expected.replace(f"{prefix}", "cnn")]
    rep = json.loads((tmp_path / "cnn.export.json").read_text())
    assert rep["atc_command"] == expected
    assert rep["parity"]["outputs"]["output"]["cosine"] >= 0.9999
    assert rep["opset"] == 11
    assert [r["shapes"]["x"][0] for r in rep["profile_runs"]] == [1, 2, 4, 8] and all(r["ok"] for r in rep["profile_runs"])
    # the graph normalises: raw [0,1] pixels through ONNX == PyTorch model on hand-normalised pixels
    x01 = np.random.default_rng(5).uniform(0, 1, (4, 3, 32, 32)).astype(np.float32)
    (onnx_out,) = _ort(str(out), {"x": x01})
    with torch.no_grad():
        ref = cnn()(torch.from_numpy(normalize_by_hand(x01))).numpy()
    assert _cos(onnx_out, ref) >= 0.9999
    assert np.abs(onnx_out - ref).max() < 1e-4
    # batch axis is dynamic in the graph
    import onnx

    m = onnx.load(str(out))
    assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert m.opset_import[0].version == 11


def test_uint8_nhwc_input_normalised_and_transposed_in_graph(tmp_path, capsys):
    import torch

    from tests.export.toy_models import cnn

    out = tmp_path / "cnn_u8.onnx"
    code, text, err = run(["export", "tests.export.toy_models:cnn", "--input", "img:-1,32,32,3:uint8",
                           "--dynamic-batch", "1,4", "--normalize", "imagenet", "--layout", "NHWC", "--onnx", str(out)], capsys)
    assert code == 0, text + err
    assert '--input_format=NHWC --input_shape="img:-1,32,32,3" --dynamic_batch_size="1,4"' in text
    assert '--soc_version="${SOC_VERSION}"' in text and "npu-smi info" in text
    pix = np.random.default_rng(1).integers(0, 256, (2, 32, 32, 3)).astype(np.uint8)
    (onnx_out,) = _ort(str(out), {"img": pix})
    x01 = pix.transpose(0, 3, 1, 2).astype(np.float32) / 255.0
    with torch.no_grad():
        ref = cnn()(torch.from_numpy(normalize_by_hand(x01))).numpy()
    assert _cos(onnx_out, ref) >= 0.9999


def test_image_size_dynamic_model_uses_dynamic_image_size(tmp_path, capsys):
    out = tmp_path / "seg.onnx"
    code, text, err = run(["export", "tests.export.toy_models:segnet", "--input", "x:1,3,-1,-1:float32",
                           "--dynamic-image-size", "32,32;64,48", "--chip", "Ascend310P3", "--onnx", str(out)], capsys)
    assert code == 0, text + err
    expected = (f'atc --model={out} --framework=5 --output={tmp_path / "seg"} --soc_version=Ascend310P3 '
                f'--input_format=NCHW --input_shape="x:1,3,-1,-1" --dynamic_image_size="32,32;64,48" '
                f'--precision_mode=force_fp16 --output_type=FP32')
    assert expected in text.splitlines()
    assert "--dynamic_batch_size" not in text and "--dynamic_dims" not in text
    rep = json.loads((tmp_path / "seg.export.json").read_text())
    assert [r["output_shapes"]["output"] for r in rep["profile_runs"]] == [[1, 2, 32, 32], [1, 2, 64, 48]]


def test_two_input_nlp_model_uses_dynamic_dims(tmp_path, capsys):
    pytest.importorskip("transformers")
    out = tmp_path / "bert.onnx"
    code, text, err = run(["export", "tests.compare.toy_models:bert_plain",
                           "--input", "input_ids:1,-1:int64:0..99", "--input", "attention_mask:1,-1:int64:1..1",
                           "--dynamic-dims", "16,16;32,32", "--output-names", "last_hidden_state,pooler_output",
                           "--chip", "Ascend910B3", "--onnx", str(out)], capsys)
    assert code == 0, text + err
    expected = (f'atc --model={out} --framework=5 --output={tmp_path / "bert"} --soc_version=Ascend910B3 '
                f'--input_format=ND --input_shape="input_ids:1,-1;attention_mask:1,-1" --dynamic_dims="16,16;32,32" '
                f'--precision_mode=force_fp16 --output_type=FP32')
    assert expected in text.splitlines()
    rep = json.loads((tmp_path / "bert.export.json").read_text())
    assert rep["parity"]["outputs"]["last_hidden_state"]["cosine"] >= 0.9999
    assert [r["output_shapes"]["last_hidden_state"] for r in rep["profile_runs"]] == [[1, 16, 32], [1, 32, 32]]


def test_aipp_config_export(tmp_path, capsys):
    from ascendify.export.aipp import parse_aipp

    out = tmp_path / "cnn.onnx"
    code, text, err = run(["export", "tests.export.toy_models:cnn", "--input", "x:-1,3,32,32:float32",
                           "--dynamic-batch", "1,8", "--normalize", "imagenet", "--aipp",
                           "--chip", "Ascend310P3", "--onnx", str(out)], capsys)
    assert code == 0, text + err
    cfg_path = tmp_path / "cnn.aipp.cfg"
    assert f"--insert_op_conf={cfg_path} --precision_mode=force_fp16" in text
    cfg = parse_aipp(cfg_path.read_text())
    assert cfg["input_format"] == "RGB888_U8" and cfg["aipp_mode"] == "static"
    assert (cfg["src_image_size_w"], cfg["src_image_size_h"]) == (32, 32)
    assert cfg["min_chn_0"] == pytest.approx(123.675) and cfg["min_chn_2"] == pytest.approx(103.53)
    assert cfg["var_reci_chn_1"] == pytest.approx(1 / (255 * 0.224), rel=1e-9)
    rep = json.loads((tmp_path / "cnn.export.json").read_text())
    assert rep["parity"]["aipp_check"]["cosine"] >= 0.9999


def test_unexportable_op_names_op_and_source_line(tmp_path, capsys):
    import tests.export.toy_models as tm

    code, _, err = run(["export", "tests.export.toy_models:with_fft", "--input", "x:2,8:float32",
                        "--onnx", str(tmp_path / "f.onnx")], capsys)
    assert code == 2
    src = open(tm.__file__).read().splitlines()
    line = next(i + 1 for i, s in enumerate(src) if "FFT_LINE" in s)
    assert "cannot export aten::fft_fft at opset 11" in err
    assert f"{tm.__file__}:{line} in forward" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "f.onnx").exists()


def test_unused_input_dropped_is_an_error(tmp_path, capsys):
    code, _, err = run(["export", "tests.export.toy_models:unused_input", "--input", "x:2,3", "--input", "unused:2,3",
                        "--onnx", str(tmp_path / "u.onnx")], capsys)
    assert code == 2 and "the ONNX graph inputs are ['x'], not ['x', 'unused']" in err


def test_opset_above_17_warns(tmp_path, capsys):
    code, text, err = run(["export", "tests.export.toy_models:segnet", "--input", "x:1,3,8,8", "--opset", "18",
                           "--onnx", str(tmp_path / "s.onnx")], capsys)
    assert code == 0, text + err
    assert "warning: opset 18 is above 17" in text
    code, text, _ = run(["export", "tests.export.toy_models:segnet", "--input", "x:1,3,8,8",
                         "--onnx", str(tmp_path / "s11.onnx")], capsys)
    assert "opset 11" in text and "is above 17" not in text


def test_bad_input_spec_and_missing_dynamic_option(tmp_path, capsys):
    code, _, err = run(["export", "tests.export.toy_models:cnn", "--input", "x:-1,3,32,32",
                        "--onnx", str(tmp_path / "c.onnx")], capsys)
    assert code == 2 and "E10011" in err and "--dynamic-batch" in err
    code, _, err = run(["export", "tests.export.toy_models:cnn", "--input", "x:-1,3,a,32",
                        "--onnx", str(tmp_path / "c.onnx")], capsys)
    assert code == 2 and "dim 'a' is not an integer" in err
    code, _, err = run(["export", "nosuch.module:make", "--input", "x:1,3,8,8", "--onnx", str(tmp_path / "c.onnx")], capsys)
    assert code == 2 and "cannot import 'nosuch.module'" in err
    assert not os.path.exists(tmp_path / "c.onnx")
