"""`ascendify compare` on the supported file formats, pairing, bad input and reports."""

from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest

from tests.compare.helpers import run


@pytest.fixture()
def base(tmp_path):
    rng = np.random.default_rng(0)
    arrs = {"img1/logits": rng.standard_normal((2, 10)).astype(np.float32),
            "img1/feat": rng.standard_normal((2, 4, 3)).astype(np.float32),
            "img2/logits": rng.standard_normal((2, 10)).astype(np.float32),
            "img2/feat": rng.standard_normal((2, 4, 3)).astype(np.float32)}
    p = tmp_path / "base.npz"
    np.savez(p, **arrs)
    return str(p), arrs


def test_identical_npz_passes_exit_0(base, tmp_path, capsys):
    p, arrs = base
    c = tmp_path / "cand.npz"
    np.savez(c, **arrs)
    code, out, err = run(["compare", p, str(c), "--json", str(tmp_path / "r.json")], capsys)
    assert code == 0, err
    assert "PASS: 4 tensor pairs, 0 failing" in out
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["verdict"] == "PASS"
    assert {o["output"] for o in rep["outputs"]} == {"logits", "feat"}
    assert len(rep["rows"]) == 4 and all(r["cosine"] == pytest.approx(1.0) for r in rep["rows"])


def test_perturbed_sample_fails_with_named_row_and_exit_1(base, tmp_path, capsys):
    p, arrs = base
    cand = dict(arrs)
    cand["img2/logits"] = -arrs["img2/logits"]
    c = tmp_path / "cand.npz"
    np.savez(c, **cand)
    code, out, _ = run(["compare", p, str(c), "--json", str(tmp_path / "r.json")], capsys)
    assert code == 1
    rep = json.loads((tmp_path / "r.json").read_text())
    bad = [r for r in rep["rows"] if r["status"] == "FAIL"]
    assert [(r["sample"], r["output"]) for r in bad] == [("img2", "logits")]
    assert bad[0]["cosine"] == pytest.approx(-1.0)
    logits = next(o for o in rep["outputs"] if o["output"] == "logits")
    assert logits["failing_samples"] == 1 and logits["status"] == "FAIL"
    assert "img2" in out and "FAIL" in out


def test_thresholds_override_changes_verdict(base, tmp_path, capsys):
    p, arrs = base
    cand = {k: v + np.float32(0.02) for k, v in arrs.items()}
    c = tmp_path / "cand.npz"
    np.savez(c, **cand)
    assert run(["compare", p, str(c)], capsys)[0] == 0          # defaults: rmse 0.02 <= 1 etc.
    code, out, _ = run(["compare", p, str(c), "--thresholds", "rmse=0.01"], capsys)
    assert code == 1 and "rmse 0.02 > 0.01" in out
    code, _, _ = run(["compare", p, str(c), "--metric", "cosine"], capsys)
    assert code == 0


def test_npy_folder_and_bin_runner_names(base, tmp_path, capsys):
    p, arrs = base
    d = tmp_path / "om_out" / "2026_11_30-05_00_00"
    d.mkdir(parents=True)
    # ais_bench-style raw outputs in a timestamp folder: <sample>_<output index>.bin, shapes from the baseline
    arrs["img1/logits"].tofile(d / "img1_0.bin")
    arrs["img1/feat"].tofile(d / "img1_1.bin")
    np.save(d / "img2_0.npy", arrs["img2/logits"])
    arrs["img2/feat"].tofile(d / "img2_1.bin")
    code, out, err = run(["compare", p, str(tmp_path / "om_out")], capsys)
    assert code == 0, out + err
    assert "4 tensor pairs" in out and "0 missing" in out


def test_bin_size_mismatch_is_clear_error(base, tmp_path, capsys):
    p, arrs = base
    d = tmp_path / "om_out"
    d.mkdir()
    np.zeros(7, np.float32).tofile(d / "img1_0.bin")
    code, _, err = run(["compare", p, str(d)], capsys)
    assert code == 2
    assert "img1_0.bin: 28 bytes do not fit shape (2, 10) float32 (80 bytes expected)" in err
    assert "Traceback" not in err


def test_bin_with_sidecar_and_explicit_shape(tmp_path, capsys):
    y = np.arange(12, dtype=np.float16).reshape(3, 4)
    b = tmp_path / "b"
    b.mkdir()
    np.save(b / "out.npy", y.astype(np.float32))
    c = tmp_path / "c"
    c.mkdir()
    y.tofile(c / "out.bin")
    (c / "out.bin.json").write_text(json.dumps({"shape": [3, 4], "dtype": "float16"}))
    code, out, err = run(["compare", str(b), str(c)], capsys)
    assert code == 0, out + err
    os.remove(c / "out.bin.json")
    code, _, err = run(["compare", str(b), str(c), "--bin-shape", "out:3,4", "--bin-dtype", "float16"], capsys)
    assert code == 0, err
    code, _, err = run(["compare", str(b), str(c), "--bin-shape", "out:5,4", "--bin-dtype", "float16"], capsys)
    assert code == 2 and "24 bytes do not fit shape (5, 4) float16 (40 bytes expected)" in err


def test_shape_mismatch_named_per_output_never_broadcast(base, tmp_path, capsys):
    p, arrs = base
    cand = dict(arrs)
    cand["img1/logits"] = arrs["img1/logits"][:1]         # (1, 10) would broadcast against (2, 10)
    cand["img1/feat"] = arrs["img1/feat"].reshape(2, 12)   # same size, other shape: compared, noted
    c = tmp_path / "cand.npz"
    np.savez(c, **cand)
    code, out, _ = run(["compare", p, str(c), "--json", str(tmp_path / "r.json")], capsys)
    assert code == 1
    rows = {(r["sample"], r["output"]): r for r in json.loads((tmp_path / "r.json").read_text())["rows"]}
    bad = rows[("img1", "logits")]
    assert bad["status"] == "FAIL"
    assert "shape mismatch: baseline (2, 10) (20 elements) vs candidate (1, 10) (10 elements); not broadcast" in bad["failed"]
    feat = rows[("img1", "feat")]
    assert feat["status"] == "PASS" and any("shapes differ" in n for n in feat["notes"])
    assert "shape mismatch" in out


def test_nan_in_baseline_reported(base, tmp_path, capsys):
    p, arrs = base
    b2 = dict(arrs)
    b2["img1/logits"] = arrs["img1/logits"].copy()
    b2["img1/logits"][0, 0] = np.nan
    bp = tmp_path / "b2.npz"
    np.savez(bp, **b2)
    c = tmp_path / "cand.npz"
    np.savez(c, **arrs)
    code, out, _ = run(["compare", str(bp), str(c)], capsys)
    assert "the baseline has 1 NaN/Inf values" in out
    assert "baseline has 1 NaN and 0 Inf values" in out
    assert code == 1  # NaN on one side only is a mismatch


def test_safetensors_candidate(base, tmp_path, capsys):
    from safetensors.numpy import save_file

    p, arrs = base
    st = tmp_path / "c.safetensors"
    save_file({k: np.ascontiguousarray(v) for k, v in arrs.items()}, str(st))
    code, out, err = run(["compare", p, str(st)], capsys)
    assert code == 0, out + err
    assert "4 tensor pairs" in out


def test_pt_weights_only_accepted_and_pickle_refused(base, tmp_path, capsys):
    import torch

    p, arrs = base
    pt = tmp_path / "c.pt"
    torch.save({"img1": {"logits": torch.from_numpy(arrs["img1/logits"]), "feat": torch.from_numpy(arrs["img1/feat"])},
                "img2": {"logits": torch.from_numpy(arrs["img2/logits"]), "feat": torch.from_numpy(arrs["img2/feat"])}}, pt)
    code, out, err = run(["compare", p, str(pt)], capsys)
    assert code == 0, out + err

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned > " + str(tmp_path / "pwned"),))

    bad = tmp_path / "evil.pt"
    torch.save({"x": Evil()}, bad, pickle_module=pickle)
    code, _, err = run(["compare", p, str(bad)], capsys)
    assert code == 2
    assert "refused: this .pt needs general unpickling" in err
    assert not (tmp_path / "pwned").exists()


def test_missing_output_fails_and_is_listed(base, tmp_path, capsys):
    p, arrs = base
    cand = {k: v for k, v in arrs.items() if k != "img2/feat"}
    c = tmp_path / "cand.npz"
    np.savez(c, **cand)
    code, out, _ = run(["compare", p, str(c)], capsys)
    assert code == 1 and "missing in candidate: img2/feat" in out


def test_plot_svg_written(base, tmp_path, capsys):
    p, arrs = base
    cand = {k: v * np.float32(1.001) for k, v in arrs.items()}
    c = tmp_path / "cand.npz"
    np.savez(c, **cand)
    svg = tmp_path / "err.svg"
    code, _, err = run(["compare", p, str(c), "--plot", str(svg)], capsys)
    assert code == 0, err
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "logits" in text


def test_no_pairs_is_an_error(base, tmp_path, capsys):
    p, _ = base
    c = tmp_path / "c.npz"
    np.savez(c, other=np.zeros(3))
    code, _, err = run(["compare", p, str(c)], capsys)
    assert code == 2 and "pairs with one of" in err


def test_streamed_npz_reader_chunks(tmp_path):
    from ascendify.compare.io import open_collection

    a = np.arange(1000, dtype=np.float32).reshape(10, 100)
    np.savez(tmp_path / "x.npz", a=a)
    col = open_collection(str(tmp_path / "x.npz"))
    chunks = list(col.refs["a"].chunks(64))
    assert max(c.size for c in chunks) == 64 and len(chunks) == 16
    assert np.array_equal(np.concatenate(chunks), a.reshape(-1))


def test_jobs_parallel_same_result_as_serial(base, tmp_path):
    from ascendify.compare.engine import compare_collections
    from ascendify.compare.io import open_collection

    p, arrs = base
    c = tmp_path / "cand.npz"
    np.savez(c, **{k: v * np.float32(1.01) for k, v in arrs.items()})
    a = compare_collections(open_collection(p), open_collection(str(c)), jobs=1).as_dict()
    b = compare_collections(open_collection(p), open_collection(str(c)), jobs=2).as_dict()
    assert a["rows"] == b["rows"] and a["verdict"] == b["verdict"] == "PASS"


def test_bin_on_both_sides_without_shape_is_error(tmp_path, capsys):
    for side in ("b", "c"):
        (tmp_path / side).mkdir()
        np.zeros(4, np.float32).tofile(tmp_path / side / "out.bin")
    code, _, err = run(["compare", str(tmp_path / "b"), str(tmp_path / "c")], capsys)
    assert code == 2 and "raw .bin on both sides with no shape" in err
    code, out, err = run(["compare", str(tmp_path / "b"), str(tmp_path / "c"), "--bin-shape", "2,2"], capsys)
    assert code == 0, out + err


def test_csv_rows(base, tmp_path, capsys):
    import csv

    p, arrs = base
    c = tmp_path / "cand.npz"
    np.savez(c, **arrs)
    out = tmp_path / "r.csv"
    assert run(["compare", p, str(c), "--csv", str(out)], capsys)[0] == 0
    rows = list(csv.DictReader(out.read_text().splitlines()))
    assert len(rows) == 4 and float(rows[0]["CosineSimilarity"]) == pytest.approx(1.0) and rows[0]["status"] == "PASS"
    assert rows[0]["MaxAbsoluteError"] == "0.0"
    assert {r["shape_baseline"] for r in rows} == {"2x10", "2x4x3"}


def test_output_file_csv_replaces_stdout(base, tmp_path, capsys):
    """-o x.csv (the suffix picks csv) writes the rows there and prints nothing else."""
    import csv

    p, arrs = base
    c = tmp_path / "cand.npz"
    np.savez(c, **arrs)
    f = tmp_path / "x.csv"
    code, out, err = run(["compare", p, str(c), "-o", str(f)], capsys)
    assert code == 0, err
    assert out == ""
    rows = list(csv.DictReader(f.read_text().splitlines()))
    assert len(rows) == 4 and {r["status"] for r in rows} == {"PASS"}
    g = tmp_path / "y.txt"
    code, out, _ = run(["compare", p, str(c), "--format", "csv", "-o", str(g)], capsys)
    assert code == 0 and out == "" and g.read_text() == f.read_text()


def test_format_csv_without_o_prints_the_rows(base, tmp_path, capsys):
    import csv

    p, arrs = base
    cand = dict(arrs)
    cand["img2/logits"] = -arrs["img2/logits"]
    c = tmp_path / "cand.npz"
    np.savez(c, **cand)
    code, out, err = run(["compare", p, str(c), "--format", "csv"], capsys)
    assert code == 1, err
    rows = list(csv.DictReader(out.splitlines()))
    assert len(rows) == 4
    assert [(r["sample"], r["output"]) for r in rows if r["status"] == "FAIL"] == [("img2", "logits")]
    assert "PASS:" not in out and "FAIL:" not in out  # no text report mixed in


def test_csv_artefact_beside_text_report(base, tmp_path, capsys):
    p, arrs = base
    c = tmp_path / "cand.npz"
    np.savez(c, **arrs)
    f = tmp_path / "rows.csv"
    code, out, _ = run(["compare", p, str(c), "--csv", str(f)], capsys)
    assert code == 0 and "PASS: 4 tensor pairs" in out and f.read_text().startswith("sample,output,")


def test_plot_line_on_stderr(base, tmp_path, capsys):
    p, arrs = base
    c = tmp_path / "cand.npz"
    np.savez(c, **arrs)
    svg = tmp_path / "e.svg"
    code, out, err = run(["compare", p, str(c), "--plot", str(svg), "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)["verdict"] == "PASS"
    assert err.strip().splitlines()[-1] == f"plot: {svg}" and "plot:" not in out
