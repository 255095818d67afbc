"""`ascendify baseline`: PyTorch factory or ONNX over a data folder, then compare end to end."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from tests.compare.helpers import run


@pytest.fixture()
def data_dir(tmp_path):
    d = tmp_path / "data"
    (d / "sub").mkdir(parents=True)
    rng = np.random.default_rng(0)
    np.save(d / "a.npy", rng.standard_normal((2, 3, 16, 16)).astype(np.float32))
    np.save(d / "sub" / "b.npy", rng.standard_normal((1, 3, 16, 16)).astype(np.float32))
    return d


def _meta(path):
    with zipfile.ZipFile(path) as zf, zf.open("__ascendify__.npy") as fh:
        arr = np.lib.format.read_array(fh, allow_pickle=False)
    return json.loads(arr.tobytes().decode())


def test_torch_baseline_records_named_outputs_and_sources(data_dir, tmp_path, capsys):
    import torch

    from tests.export.toy_models import cnn

    out = tmp_path / "base.npz"
    code, text, err = run(["baseline", "tests.export.toy_models:cnn", "--data", str(data_dir), "--npz", str(out)], capsys)
    assert code == 0, text + err
    assert "2 samples × 1 outputs (output)" in text
    with np.load(out, allow_pickle=False) as z:
        keys = sorted(k for k in z.files if k != "__ascendify__")
        assert keys == ["a/output", "sub/b/output"]
        with torch.no_grad():
            ref = cnn()(torch.from_numpy(np.load(data_dir / "a.npy"))).numpy()
        np.testing.assert_array_equal(z["a/output"], ref)
    meta = _meta(out)
    assert meta["kind"] == "torch" and meta["outputs"] == ["output"] and meta["inputs"] == ["x"]
    files = {s["sample"]: s["file"] for s in meta["samples"]}
    assert files["sub/b"].endswith("data/sub/b.npy")
    assert meta["samples"][0]["outputs"]["output"]["shape"] == [2, 10]


def test_onnx_baseline_matches_torch_baseline(data_dir, tmp_path, capsys):
    onnx_path = tmp_path / "cnn.onnx"
    code, text, err = run(["export", "tests.export.toy_models:cnn", "--input", "x:-1,3,16,16", "--dynamic-batch", "1,2",
                           "--onnx", str(onnx_path)], capsys)
    assert code == 0, text + err
    assert run(["baseline", "tests.export.toy_models:cnn", "--data", str(data_dir), "--npz", str(tmp_path / "t.npz")], capsys)[0] == 0
    assert run(["baseline", str(onnx_path), "--data", str(data_dir), "--npz", str(tmp_path / "o.npz")], capsys)[0] == 0
    assert _meta(tmp_path / "o.npz")["kind"] == "onnx"
    code, text, _ = run(["compare", str(tmp_path / "t.npz"), str(tmp_path / "o.npz"), "--thresholds", "cosine=0.9999"], capsys)
    assert code == 0 and "PASS: 2 tensor pairs" in text


def test_images_with_preprocessing(tmp_path, capsys):
    import torch
    from PIL import Image

    from tests.export.toy_models import cnn

    d = tmp_path / "imgs"
    d.mkdir()
    pix = np.random.default_rng(3).integers(0, 256, (20, 24, 3)).astype(np.uint8)
    Image.fromarray(pix).save(d / "cat.png")
    out = tmp_path / "b.npz"
    code, text, err = run(["baseline", "tests.export.toy_models:cnn", "--data", str(d), "--npz", str(out),
                           "--normalize", "imagenet"], capsys)
    assert code == 0, text + err
    x = pix.astype(np.float32) / 255.0
    x = (x - np.array([0.485, 0.456, 0.406], np.float32)) / np.array([0.229, 0.224, 0.225], np.float32)
    x = x.transpose(2, 0, 1)[None]
    with torch.no_grad():
        ref = cnn()(torch.from_numpy(np.ascontiguousarray(x))).numpy()
    with np.load(out) as z:
        np.testing.assert_allclose(z["cat/output"], ref, rtol=1e-5, atol=1e-6)


def test_multi_input_npz_and_nan_warning(tmp_path, capsys):
    d = tmp_path / "d"
    d.mkdir()
    np.savez(d / "s.npz", a=np.array([1.0, 0.0], np.float32), b=np.array([1.0, 0.0], np.float32))
    (tmp_path / "div_mod.py").write_text(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, a, b):\n        return a / b, a + b\n"
        "def make():\n    return M()\n")
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        code, text, err = run(["baseline", "div_mod:make", "--data", str(d), "--npz", str(tmp_path / "b.npz"),
                               "--output-names", "ratio,total"], capsys)
    finally:
        sys.path.remove(str(tmp_path))
    assert code == 0, text + err
    assert "baseline has NaN/Inf in 1 output(s), e.g. s/ratio" in text
    with np.load(tmp_path / "b.npz") as z:
        assert np.isnan(z["s/ratio"][1]) and z["s/total"].tolist() == [2.0, 0.0]


def test_npy_for_multi_input_model_is_error(tmp_path, capsys):
    d = tmp_path / "d"
    d.mkdir()
    np.save(d / "x.npy", np.zeros(3, np.float32))
    (tmp_path / "two_in.py").write_text(
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, a, b):\n        return a + b\n"
        "def make():\n    return M()\n")
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        code, _, err = run(["baseline", "two_in:make", "--data", str(d), "--npz", str(tmp_path / "b.npz")], capsys)
    finally:
        sys.path.remove(str(tmp_path))
    assert code == 2 and "x.npy: the model has 2 inputs (a, b); use .npz files" in err
    assert not (tmp_path / "b.npz").exists()


def test_npy_normalize_matches_graph_exported_with_normalize(data_dir, tmp_path, capsys):
    onnx_path = tmp_path / "cnn.onnx"
    assert run(["export", "tests.export.toy_models:cnn", "--input", "x:-1,3,16,16", "--dynamic-batch", "1,2",
                "--normalize", "imagenet", "-o", str(onnx_path)], capsys)[0] == 0
    # PyTorch baseline on normalised inputs vs the ONNX (normalising in-graph) on raw inputs
    assert run(["baseline", "tests.export.toy_models:cnn", "--data", str(data_dir), "--normalize", "imagenet",
                "-o", str(tmp_path / "t.npz")], capsys)[0] == 0
    assert run(["baseline", str(onnx_path), "--data", str(data_dir), "--npz", str(tmp_path / "o.npz")], capsys)[0] == 0
    code, text, _ = run(["compare", str(tmp_path / "t.npz"), str(tmp_path / "o.npz"), "--thresholds", "cosine=0.9999"], capsys)
    assert code == 0, text
    # without the normalisation the same pair fails
    assert run(["baseline", "tests.export.toy_models:cnn", "--data", str(data_dir), "--npz", str(tmp_path / "raw.npz")], capsys)[0] == 0
    assert run(["compare", str(tmp_path / "raw.npz"), str(tmp_path / "o.npz")], capsys)[0] == 1


def test_baseline_npz_follows_the_umask(tmp_path, capsys, data_dir, umask):
    from tests.conftest import mode_of

    umask(0o022)
    out = tmp_path / "m.npz"
    assert run(["baseline", "tests.export.toy_models:cnn", "--data", str(data_dir), "--npz", str(out)], capsys)[0] == 0
    assert mode_of(out) == 0o644
