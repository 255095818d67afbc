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
