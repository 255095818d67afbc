"""Metrics against hand-computed values (definitions: accuracy-profiling-atc.md §2.3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ascendify.compare import metrics as M
from ascendify.errors import AscendifyError


def test_small_vector_hand_values():
    # candidate x = [1, 2, 3], baseline y = [1, 2, 4]
    r = M.compare_arrays(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 4.0]))
    assert r["cosine"] == pytest.approx(17 / math.sqrt(14 * 21), abs=1e-15)
    assert r["max_abs"] == 1.0
    assert r["mae"] == pytest.approx(1 / 3)
    assert r["rmse"] == pytest.approx(math.sqrt(1 / 3))
    assert r["max_rel"] == pytest.approx(0.25)            # |3/4 - 1|
    assert r["acc_rel"] == pytest.approx(0.25)
    assert r["mean_rel"] == pytest.approx(0.25 / 3)
    assert r["rel_euclid"] == pytest.approx(1 / math.sqrt(21))
    # KL: p = minmax(x) = [0, .5, 1] floored at eps32, q = minmax(y) = [0, 1/3, 1] floored
    e = float(np.finfo(np.float32).eps)
    p = np.array([e, 0.5, 1.0])
    q = np.array([e, 1 / 3, 1.0])
    p, q = p / p.sum(), q / q.sum()
    assert r["kl"] == pytest.approx(float(np.sum(p * np.log(p / q))), rel=1e-12)


def test_relative_error_masks_zero_baseline():
    # baseline zero at index 0: masked out of relative errors but counted in the mean's n
    r = M.compare_arrays(np.array([0.5, 2.0]), np.array([0.0, 1.0]))
    assert r["max_rel"] == pytest.approx(1.0)
    assert r["acc_rel"] == pytest.approx(1.0)
    assert r["mean_rel"] == pytest.approx(0.5)
    assert r["max_abs"] == pytest.approx(1.0)


def test_all_zero_both_sides():
    r = M.compare_arrays(np.zeros(5), np.zeros(5))
    assert r["cosine"] == 1.0
    assert r["rel_euclid"] == 0.0
    assert r["max_rel"] == 0.0 and r["mean_rel"] == 0.0
    assert r["kl"] == 0.0
    assert r["rmse"] == 0.0
    assert M.check_thresholds(r, M.DEFAULT_THRESHOLDS) == []


def test_one_side_zero_cosine_nan_with_reason():
    r = M.compare_arrays(np.zeros(3), np.array([1.0, 2.0, 3.0]))
    assert math.isnan(r["cosine"])
    assert any("candidate is all zero" in s for s in r["reasons"])
    assert r["rel_euclid"] == pytest.approx(1.0)
    # cosine NaN is not flagged (msit), but relative Euclidean distance is
    failed = M.check_thresholds(r, M.DEFAULT_THRESHOLDS)
    assert any(f.startswith("rel_euclid") for f in failed)
    assert not any(f.startswith("cosine") for f in failed)


def test_all_equal_constant_tensors():
    r = M.compare_arrays(np.full(4, 7.0), np.full(4, 7.0))
    assert r["cosine"] == pytest.approx(1.0)
    assert r["max_abs"] == 0.0 and r["kl"] == 0.0 and r["max_rel"] == 0.0
    # constant but different: KL of two uniform distributions is 0, errors are not
    r2 = M.compare_arrays(np.full(4, 8.0), np.full(4, 7.0))
    assert r2["kl"] == 0.0
    assert r2["max_rel"] == pytest.approx(1 / 7)
    assert r2["rel_euclid"] == pytest.approx(1 / 7)


def test_nan_and_inf_counted_not_propagated():
    x = np.array([1.0, np.nan, 3.0, np.inf, 5.0])
    y = np.array([1.0, 2.0, np.nan, np.inf, 4.0])
    r = M.compare_arrays(x, y)
    assert r["nan_candidate"] == 1 and r["inf_candidate"] == 1
    assert r["nan_baseline"] == 1 and r["inf_baseline"] == 1
    # index 1 and 2 differ in finiteness; index 3 is +inf on both sides (agrees)
    assert r["nonfinite_mismatch"] == 2
    assert r["n_valid"] == 2
    assert r["max_abs"] == pytest.approx(1.0)             # only [1,5] vs [1,4]
    assert not math.isnan(r["cosine"])
    assert any("baseline has 1 NaN" in s for s in r["reasons"])


def test_single_element_cosine_is_one():
    assert M.compare_arrays(np.array([2.0]), np.array([3.0]))["cosine"] == 1.0


def test_chunked_equals_single_pass():
    rng = np.random.default_rng(0)
    y = rng.standard_normal(10_001).astype(np.float32)
    x = y + rng.standard_normal(y.size).astype(np.float32) * 1e-2
    a = M.compare_arrays(x, y, chunk=1 << 20)
    b = M.compare_arrays(x, y, chunk=97)
    for k in M.METRICS:
        assert a[k] == pytest.approx(b[k], rel=1e-9, abs=1e-15), k


def test_float64_accumulation_not_float32():
    # 1e8 + 1 is not representable in float32 arithmetic; the sums must still see the difference
    y = np.array([1e8, 1.0], dtype=np.float64)
    x = np.array([1e8, 2.0], dtype=np.float64)
    assert M.compare_arrays(x, y)["max_abs"] == 1.0


def test_size_mismatch_is_an_error():
    with pytest.raises(AscendifyError, match="sizes differ"):
        M.compare_arrays(np.zeros(3), np.zeros(4))


def test_thresholds_parse_and_direction():
    th = M.parse_thresholds("cosine=0.999, RootMeanSquareError<=0.1, kl=off")
    assert th["cosine"] == 0.999 and th["rmse"] == 0.1 and "kl" not in th
    assert th["rel_euclid"] == 0.05  # defaults kept
    assert M.check_thresholds({"cosine": 0.9985, "rmse": 0.05}, th) == ["cosine 0.9985 < 0.999"]
    assert M.check_thresholds({"cosine": 0.9995, "rmse": 0.2}, th) == ["rmse 0.2 > 0.1"]
    with pytest.raises(AscendifyError, match="unknown metric"):
        M.parse_thresholds("cosin=0.9")
    with pytest.raises(AscendifyError, match="not a number"):
        M.parse_thresholds("cosine=high")


def test_default_thresholds_are_msits():
    assert M.DEFAULT_THRESHOLDS == {"cosine": 0.99, "rel_euclid": 0.05, "kl": 0.005, "rmse": 1.0, "mean_rel": 1.0}


# --- one data pass (range pass for KL's min/max, then everything at once) -------------

def _reference(x, y):
    """The metric definitions applied to whole arrays in float64 (no chunking, no fast paths)."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    both = np.isfinite(x) & np.isfinite(y)
    x, y = x[both], y[both]
    d = x - y
    m = np.abs(y) > np.finfo(np.float64).eps
    rel = np.abs(d[m]) / np.abs(y[m])
    eps32 = float(np.finfo(np.float32).eps)

    def dist(v):
        rng = v.max() - v.min()
        p = np.maximum((v - v.min()) / rng if rng > 0 else np.zeros_like(v), eps32)
        return p / p.sum()

    p, q = dist(x), dist(y)
    return {
        "cosine": min(1.0, float(x @ y / math.sqrt((x @ x) * (y @ y)))),
        "max_abs": float(np.abs(d).max()), "mae": float(np.abs(d).mean()),
        "rmse": math.sqrt(float(d @ d) / d.size), "max_rel": float(rel.max(initial=0.0)),
        "acc_rel": float(rel.sum()), "mean_rel": float(rel.sum()) / d.size,
        "rel_euclid": math.sqrt(float(d @ d)) / math.sqrt(float(y @ y)),
        "kl": float(np.sum(p * np.log(p / q))),
    }


def _messy_pair(n=5000, seed=3):
    """float32 pair with NaN/Inf in several chunks, zeros and sub-eps values in the baseline,
    values beyond fp16 range, and a clear difference (KL ~ 1e-2)."""
    rng = np.random.default_rng(seed)
    y = rng.standard_normal(n).astype(np.float32)
    x = (y + rng.standard_normal(n) * 0.3).astype(np.float32)
    y[::101] = 0.0
    y[7::211] = 1e-30
    x[50] = 7e4
    y[60] = -9e4
    x[1200] = np.nan
    y[3333] = np.inf
    x[4000] = y[4000] = -np.inf          # agrees: not a mismatch, left out of the metrics
    return x, y


@pytest.mark.parametrize("chunk", [97, 1000, 1 << 16])
def test_one_pass_matches_definitions_on_messy_data(chunk):
    x, y = _messy_pair()
    r = M.compare_arrays(x, y, chunk=chunk)
    ref = _reference(x, y)
    for k, v in ref.items():
        assert r[k] == pytest.approx(v, rel=1e-9), k
    assert r["kl"] > 1e-3                                  # a real difference, not rounding noise
    assert (r["nan_candidate"], r["inf_candidate"], r["nan_baseline"], r["inf_baseline"]) == (1, 1, 0, 2)
    assert r["nonfinite_mismatch"] == 2 and r["n_valid"] == x.size - 3
    assert r["fp16_overflow_candidate"] == 1 and r["fp16_overflow_baseline"] == 1
    # min/max (and so KL's normalisation) come from the finite pairs only
    fin = np.isfinite(x) & np.isfinite(y)
    assert r["max_candidate"] == float(x[fin].max()) == 7e4
    assert r["min_baseline"] == float(y[fin].min()) == -9e4


def test_kl_needs_two_reads_and_other_metrics_one():
    x, y = _messy_pair()
    calls = []

    def pairs():
        calls.append(1)
        for i in range(0, x.size, 256):
            yield x[i:i + 256], y[i:i + 256]

    with_kl = M.compute(pairs, want_kl=True)
    assert len(calls) == 2                                   # min/max range pass + one data pass
    calls.clear()
    without = M.compute(pairs, want_kl=False)
    assert len(calls) == 1 and math.isnan(without["kl"])
    for k in M.METRICS:                                      # the KL pass changes nothing else
        if k != "kl":
            assert without[k] == with_kl[k], k
    for k in ("min_candidate", "max_candidate", "min_baseline", "max_baseline", "mean_candidate", "std_baseline"):
        assert without[k] == with_kl[k], k


def test_inputs_are_not_modified_and_read_only_inputs_work():
    x, y = _messy_pair()
    xs, ys = x.copy(), y.copy()
    x.setflags(write=False)
    y.setflags(write=False)
    M.compare_arrays(x, y, chunk=128, want_hist=True)
    assert np.array_equal(x, xs, equal_nan=True) and np.array_equal(y, ys, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.uint8, np.bool_, np.float64])
def test_other_dtypes_match_definitions(dtype):
    rng = np.random.default_rng(5)
    y = (rng.standard_normal(3000) * 4).astype(dtype)
    x = (rng.standard_normal(3000) * 4).astype(dtype)
    if dtype is np.bool_:
        y[0] = True  # some |y| > eps
    r = M.compare_arrays(x, y, chunk=500)
    for k, v in _reference(x, y).items():
        assert r[k] == pytest.approx(v, rel=1e-9, abs=1e-15), k


def test_chunk_with_only_nonfinite_pairs_and_all_nonfinite_tensor():
    x = np.array([np.nan, np.inf, 1.0, 2.0, 4.0])
    y = np.array([np.nan, np.inf, 1.0, 2.0, 3.0])
    r = M.compare_arrays(x, y, chunk=2)                      # first chunk has no finite pair
    assert r["n_valid"] == 3 and r["nonfinite_mismatch"] == 0
    assert r["kl"] == pytest.approx(_reference(x, y)["kl"], rel=1e-12)
    r2 = M.compare_arrays(np.full(4, np.nan), np.full(4, np.nan), chunk=2)
    assert r2["n_valid"] == 0 and all(math.isnan(r2[k]) for k in M.METRICS)
    assert "no finite element pairs to compare" in r2["reasons"]
