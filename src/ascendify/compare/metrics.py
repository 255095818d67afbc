"""Streaming accuracy metrics, computed in float64, as msit / msaccucmp define them.

Source of the definitions and default thresholds: ``accuracy-profiling-atc.md``
§2.3 (msaccucmp built-ins) and §2.4 (pass/fail thresholds of msit / msprobe
offline compare).  Notation: ``x`` = candidate ("my output", e.g. NPU / .om /
onnxruntime), ``y`` = baseline ("golden", e.g. PyTorch fp32).  Both are flattened.

* ``cosine``      Σxy / (‖x‖‖y‖), clipped to ≤ 1; both all-zero → 1.0; one side
                  all-zero → NaN (reason recorded); a single element → 1.0.
* ``max_abs``     max |x − y|
* ``max_rel``     max over |y| > ε of |x/y − 1| (0 where |y| ≤ ε), ε = float64 eps
* ``mean_rel``    Σ_{|y|>ε} |x/y − 1| / n   (masked elements count as 0)
* ``acc_rel``     Σ_{|y|>ε} |x/y − 1|
* ``rel_euclid``  ‖x − y‖ / ‖y‖   (0 when ‖y‖ ≤ ε)
* ``kl``          x and y each min-max normalised to [0, 1], floored at float32
                  eps, normalised to sum 1; Σ p log(p/q), p from x, q from y.
                  A constant tensor (max = min) normalises to the uniform
                  distribution (our convention; msaccucmp's handling unverified).
* ``mae``         mean |x − y|
* ``rmse``        sqrt(mean (x − y)²)

NaN / ±Inf are counted per side and excluded: metrics use only the positions
where both sides are finite.  Positions where exactly one side is non-finite, or
the two non-finite values differ, are counted as ``nonfinite_mismatch`` (a fail).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ascendify.errors import AscendifyError

EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)
FP16_MAX = 65504.0

#: short name → (msaccucmp CSV column, "higher is better")
METRICS: dict[str, tuple[str, bool]] = {
    "cosine": ("CosineSimilarity", True),
    "max_abs": ("MaxAbsoluteError", False),
    "max_rel": ("MaxRelativeError", False),
    "mean_rel": ("MeanRelativeError", False),
    "acc_rel": ("AccumulatedRelativeError", False),
    "rel_euclid": ("RelativeEuclideanDistance", False),
    "kl": ("KullbackLeiblerDivergence", False),
    "mae": ("MeanAbsoluteError", False),
    "rmse": ("RootMeanSquareError", False),
}

#: defaults of msit / msprobe offline compare (accuracy-profiling-atc.md §2.4)
DEFAULT_THRESHOLDS: dict[str, float] = {
    "cosine": 0.99,
    "rel_euclid": 0.05,
    "kl": 0.005,
    "rmse": 1.0,
    "mean_rel": 1.0,
}

_ALIASES = {v[0].lower(): k for k, v in METRICS.items()}
_ALIASES.update({
    "cos": "cosine", "cosine_similarity": "cosine", "maxabs": "max_abs", "max_abs_err": "max_abs",
    "maxrel": "max_rel", "meanrel": "mean_rel", "accrel": "acc_rel", "euclid": "rel_euclid",
    "red": "rel_euclid", "kld": "kl", "kl_divergence": "kl", "mean_abs": "mae",
})


def metric_name(name: str) -> str:
    """Canonical short metric name for ``name`` (short, CSV column or alias, any case).
    Raises ``AscendifyError`` for unknown names."""
    n = name.strip().lower().replace("-", "_")
    if n in METRICS:
        return n
    if n in _ALIASES:
        return _ALIASES[n]
    raise AscendifyError(f"unknown metric '{name}': use one of {', '.join(METRICS)}")


def parse_thresholds(text: str | None, base: dict[str, float] | None = None) -> dict[str, float]:
    """Parse ``"cosine=0.999,rmse=0.1"`` (also ``>=``/``<=``; ``metric=off`` drops a
    monitor) on top of ``base`` (default: :data:`DEFAULT_THRESHOLDS`).  The direction
    is the metric's own (cosine is a lower bound, the others upper bounds)."""
    out = dict(DEFAULT_THRESHOLDS if base is None else base)
    if not text:
        return out
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        for sep in (">=", "<=", "="):
            if sep in part:
                k, v = part.split(sep, 1)
                break
        else:
            raise AscendifyError(f"--thresholds: '{part}' is not METRIC=VALUE (e.g. cosine=0.999,rmse=0.5)")
        key = metric_name(k)
        if v.strip().lower() in ("off", "none", ""):
            out.pop(key, None)
            continue
        try:
            out[key] = float(v)
        except ValueError:
            raise AscendifyError(f"--thresholds: '{v.strip()}' for {key} is not a number") from None
    return out


def check_thresholds(values: dict[str, float], thresholds: dict[str, float]) -> list[str]:
    """Names of the monitors that fail, as ``"cosine 0.95 < 0.99"`` strings.
    A NaN metric never fails its monitor (msit: cosine NaN rows are not flagged)."""
    failed = []
    for k, t in thresholds.items():
        v = values.get(k)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        if METRICS[k][1]:
            if v < t:
                failed.append(f"{k} {v:.6g} < {t:g}")
        elif v > t:
            failed.append(f"{k} {v:.6g} > {t:g}")
    return failed


HIST_EDGES = np.linspace(-12.0, 6.0, 73)  # log10 |x - y| bins, 0.25 decade wide


@dataclass
class Accumulator:
    """Running sums over chunks of a (candidate, baseline) pair.

    One data pass computes every metric: feed 1-D chunks with :meth:`update`, then
    call :meth:`result`.  KL needs the min/max of each side before that pass, so for
    KL first feed the same chunks to :meth:`update_range` (a cheap min/max-only pass),
    then call :meth:`start_kl`.  Memory is O(chunk): float64 scratch buffers of the
    largest chunk seen are reused, the input chunks are never modified.

    Fast path: ``Σx²`` and ``Σy²`` are finite only when the chunk holds no NaN/Inf
    (float32/16 and integer inputs cannot overflow them), so NaN/Inf masking runs
    only for chunks where they are not; relative-error masking (``|y| ≤ ε``) runs
    only for chunks whose min ``|y|`` is ≤ ε.

    ``fused``: ``None`` (default) uses the numba kernels of
    :mod:`ascendify.compare._fused` when :func:`fused_kernels` finds them usable and
    either numba is already loaded or ``size_hint`` (element pairs this compare will
    feed, -1 unknown) is not below :func:`fused_min_pairs` of ``want_kl`` (whether this
    compare computes KL: it decides only that threshold); ``False`` forces the numpy
    path, ``True`` uses the kernels whenever available (tests).
    The kernels give the same counts, minima and maxima and the same sums up to
    summation order; with ``want_hist`` the numpy path runs."""

    want_hist: bool = False
    fused: bool | None = None
    size_hint: int = -1
    want_kl: bool = True
    n: int = 0
    n_valid: int = 0
    nan_x: int = 0
    inf_x: int = 0
    nan_y: int = 0
    inf_y: int = 0
    nonfinite_mismatch: int = 0
    overflow_x: int = 0  # |x| > 65504 (finite)
    overflow_y: int = 0
    sxx: float = 0.0
    syy: float = 0.0
    sxy: float = 0.0
    sdd: float = 0.0
    sum_abs: float = 0.0
    max_abs: float = 0.0
    sum_rel: float = 0.0
    max_rel: float = 0.0
    sx: float = 0.0
    sy: float = 0.0
    min_x: float = math.inf
    max_x: float = -math.inf
    min_y: float = math.inf
    max_y: float = -math.inf
    # KL: Σp, Σq, Σ p·log(p/q) of the min-max normalised, floored (not yet sum-1) distributions
    kl_sp: float = 0.0
    kl_sq: float = 0.0
    kl_spl: float = 0.0
    kl_done: bool = False
    hist: Any = None
    zero_diff: int = 0
    ranged: bool = False  # min/max come from update_range (then update() does not recompute them)
    kl_on: bool = False   # set by start_kl: update() also accumulates the KL sums
    _scratch: Any = None
    _conv: Any = None     # the kernels' float64 copies of chunks they cannot take as they are
    _fk: Any = None       # the kernel module while the fused path is on
    _fo: Any = None
    _io: Any = None

    def __post_init__(self) -> None:
        if self.want_hist:
            self.hist = np.zeros(len(HIST_EDGES) + 1, dtype=np.int64)  # [under, bins..., over]
        elif fused_wanted(self.fused, self.size_hint, self.want_kl):
            self._fk = fused_kernels(force=self.fused is True)
            if self._fk is not None:
                self._fo = np.empty(self._fk.NF, dtype=np.float64)
                self._io = np.empty(self._fk.NI, dtype=np.int64)

    @property
    def uses_fused(self) -> bool:
        """Whether the numba kernels run for this accumulator (they are dropped for
        good if one fails)."""
        return self._fk is not None

    def _native_pair(self, xr: np.ndarray, yr: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The chunks as the kernels take them (read-only, aligned, C-contiguous, native
        float32/float64; anything else converted exactly to float64 in scratch rows 0/1),
        and make sure the kernels for that dtype pair are compiled.  None if they cannot be."""
        k = xr.size
        conv_x = xr.dtype not in _NATIVE or not (xr.flags.c_contiguous and xr.flags.aligned)
        conv_y = yr.dtype not in _NATIVE or not (yr.flags.c_contiguous and yr.flags.aligned)
        if conv_x or conv_y:  # two float64 rows (the kernels need no other scratch)
            if self._conv is None or self._conv.shape[1] < k:
                self._conv = np.empty((2, k), dtype=np.float64)
            if conv_x:
                np.copyto(self._conv[0, :k], xr, casting="unsafe")
                xr = self._conv[0, :k]
            if conv_y:
                np.copyto(self._conv[1, :k], yr, casting="unsafe")
                yr = self._conv[1, :k]
        if not _fused_ready(xr.dtype, yr.dtype):
            self._fk = None
            return None
        return _readonly(xr), _readonly(yr)

    def _range_fused(self, xr: np.ndarray, yr: np.ndarray) -> bool:
        pair = self._native_pair(xr, yr)
        if pair is None:
            return False
        fo = self._fo
        try:
            self._fk.range_pass(pair[0], pair[1], fo)
        except Exception:  # noqa: BLE001 -- any numba error: never expected after the warm-up; numpy for good
            _fused_failed()
            self._fk = None
            return False
        self.min_x = min(self.min_x, float(fo[0]))
        self.max_x = max(self.max_x, float(fo[1]))
        self.min_y = min(self.min_y, float(fo[2]))
        self.max_y = max(self.max_y, float(fo[3]))
        return True

    def _update_fused(self, xr: np.ndarray, yr: np.ndarray) -> bool:
        pair = self._native_pair(xr, yr)
        if pair is None:
            return False
        fk, fo, io = self._fk, self._fo, self._io
        lo_x = lo_y = sc_x = sc_y = 0.0
        if self.kl_on:
            lo_x, sc_x = self.min_x, _minmax_scale(self.min_x, self.max_x)
            lo_y, sc_y = self.min_y, _minmax_scale(self.min_y, self.max_y)
        mm: tuple[float, float, float, float] | None = None
        if self.ranged:
            ov_x = self.max_x > FP16_MAX or self.min_x < -FP16_MAX
            ov_y = self.max_y > FP16_MAX or self.min_y < -FP16_MAX
        else:  # the chunk's min/max by numpy's SIMD reductions on the raw dtype, as the numpy path: 4x faster
            # than the kernel's lane loops.  NaN/Inf make them non-finite: then the kernel's masked loop takes
            # min/max over the finite pairs (want_minmax) and counts the float16 overflows itself
            mm = (float(xr.min()), float(xr.max()), float(yr.min()), float(yr.max()))
            if all(math.isfinite(v) for v in mm):
                ov_x = mm[1] > FP16_MAX or mm[0] < -FP16_MAX
                ov_y = mm[3] > FP16_MAX or mm[2] < -FP16_MAX
            else:
                mm = None
                ov_x = ov_y = True
        try:
            fk.data_pass(pair[0], pair[1], not self.ranged and mm is None, ov_x, ov_y, self.kl_on, lo_x, sc_x, lo_y,
                         sc_y, fo, io)
        except Exception:  # noqa: BLE001 -- any numba error: never expected after the warm-up; numpy for good
            _fused_failed()
            self._fk = None
            return False
        self.nan_x += int(io[fk.NAN_X])
        self.inf_x += int(io[fk.INF_X])
        self.nan_y += int(io[fk.NAN_Y])
        self.inf_y += int(io[fk.INF_Y])
        self.nonfinite_mismatch += int(io[fk.MISMATCH])
        nv = int(io[fk.N_VALID])
        if nv == 0:
            return True
        self.n_valid += nv
        self.sxx += float(fo[fk.SXX])
        self.syy += float(fo[fk.SYY])
        self.sxy += float(fo[fk.SXY])
        self.sx += float(fo[fk.SX])
        self.sy += float(fo[fk.SY])
        if not self.ranged:
            if mm is None:
                mm = (float(fo[fk.MIN_X]), float(fo[fk.MAX_X]), float(fo[fk.MIN_Y]), float(fo[fk.MAX_Y]))
            self.min_x = min(self.min_x, mm[0])
            self.max_x = max(self.max_x, mm[1])
            self.min_y = min(self.min_y, mm[2])
            self.max_y = max(self.max_y, mm[3])
        self.overflow_x += int(io[fk.OVER_X])
        self.overflow_y += int(io[fk.OVER_Y])
        self.sdd += float(fo[fk.SDD])
        self.sum_abs += float(fo[fk.SUM_ABS])
        self.max_abs = max(self.max_abs, float(fo[fk.MAX_ABS]))
        self.sum_rel += float(fo[fk.SUM_REL])
        self.max_rel = max(self.max_rel, float(fo[fk.MAX_REL]))
        if self.kl_on:  # Σp, Σq and Σ p·log(p/q), all from the kernel
            self.kl_sp += float(fo[fk.KL_SP])
            self.kl_sq += float(fo[fk.KL_SQ])
            self.kl_spl += float(fo[fk.KL_SPL])
            self.kl_done = True
        return True

    def _buffers(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if self._scratch is None or self._scratch.shape[1] < k:
            self._scratch = np.empty((4, k), dtype=np.float64)
        b = self._scratch
        return b[0, :k], b[1, :k], b[2, :k], b[3, :k]

    def _finite_pair(self, x: np.ndarray, y: np.ndarray, count: bool) -> tuple[np.ndarray, np.ndarray]:
        fx = np.isfinite(x)
        fy = np.isfinite(y)
        both = fx & fy
        if count:
            nx = np.isnan(x)
            ny = np.isnan(y)
            self.nan_x += int(nx.sum())
            self.nan_y += int(ny.sum())
            self.inf_x += int((~fx).sum()) - int(nx.sum())
            self.inf_y += int((~fy).sum()) - int(ny.sum())
            with np.errstate(invalid="ignore"):
                same = (x == y) | (nx & ny)
            self.nonfinite_mismatch += int((~both & ~same).sum())
        return x[both], y[both]

    def update_range(self, x: np.ndarray, y: np.ndarray) -> None:
        """Range pass on one chunk: min/max of each side over the positions where both
        sides are finite (computed on the raw dtype: exact, and half the bytes of float64)."""
        xr = np.asarray(x).reshape(-1)
        yr = np.asarray(y).reshape(-1)
        if xr.size != yr.size:
            raise ValueError("chunk sizes differ")
        self.ranged = True
        if xr.size == 0:
            return
        mm = (float(xr.min()), float(xr.max()), float(yr.min()), float(yr.max()))
        if not all(math.isfinite(v) for v in mm):  # NaN propagates through min/max; Inf shows as a bound
            # (numpy's SIMD min/max on the raw dtype beat a numba pass on finite chunks: 0.3 vs 0.6 ns/pair)
            if self._fk is not None and self._range_fused(xr, yr):
                return
            if xr.dtype.kind == "f" or yr.dtype.kind == "f":
                xr, yr = self._finite_pair(xr, yr, False)
            if xr.size == 0:
                return
            mm = (float(xr.min()), float(xr.max()), float(yr.min()), float(yr.max()))
        self.min_x = min(self.min_x, mm[0])
        self.max_x = max(self.max_x, mm[1])
        self.min_y = min(self.min_y, mm[2])
        self.max_y = max(self.max_y, mm[3])

    def start_kl(self) -> None:
        """Fix the KL normalisation from the range pass; the next :meth:`update` pass
        then also accumulates the KL sums.  No-op when no finite pair was seen."""
        self.kl_on = self.ranged and self.min_x <= self.max_x

    def update(self, x: np.ndarray, y: np.ndarray) -> None:
        """The data pass on one chunk: ``x`` candidate, ``y`` baseline, 1-D, same length,
        any real dtype (converted to float64)."""
        xr = np.asarray(x).reshape(-1)
        yr = np.asarray(y).reshape(-1)
        k = xr.size
        if k != yr.size:
            raise ValueError("chunk sizes differ")
        self.n += k
        if k == 0:
            return
        if self._fk is not None and self._update_fused(xr, yr):
            return
        x, y, d, r = self._buffers(k)
        np.copyto(x, xr, casting="unsafe")
        np.copyto(y, yr, casting="unsafe")
        sxx = float(np.dot(x, x))
        syy = float(np.dot(y, y))
        if not (math.isfinite(sxx) and math.isfinite(syy)):  # NaN/Inf in this chunk (or float64 overflow)
            x, y = self._finite_pair(x, y, True)
            xr, yr = x, y
            k = x.size
            if k == 0:
                return
            d, r = d[:k], r[:k]
            sxx = float(np.dot(x, x))
            syy = float(np.dot(y, y))
        self.n_valid += k
        self.sxx += sxx
        self.syy += syy
        self.sxy += float(np.dot(x, y))
        self.sx += float(np.add.reduce(x))
        self.sy += float(np.add.reduce(y))
        if self.ranged:  # min/max known for the whole tensor
            ovx = self.max_x > FP16_MAX or self.min_x < -FP16_MAX
            ovy = self.max_y > FP16_MAX or self.min_y < -FP16_MAX
        else:  # min/max on the raw chunk (exact for any real dtype, half the bytes of float64)
            mnx, mxx, mny, mxy = float(xr.min()), float(xr.max()), float(yr.min()), float(yr.max())
            self.min_x = min(self.min_x, mnx)
            self.max_x = max(self.max_x, mxx)
            self.min_y = min(self.min_y, mny)
            self.max_y = max(self.max_y, mxy)
            ovx = mxx > FP16_MAX or mnx < -FP16_MAX
            ovy = mxy > FP16_MAX or mny < -FP16_MAX
        if ovx:
            self.overflow_x += int(np.count_nonzero(np.abs(x, out=d) > FP16_MAX))
        if ovy:
            self.overflow_y += int(np.count_nonzero(np.abs(y, out=d) > FP16_MAX))
        np.subtract(x, y, out=d)
        self.sdd += float(np.dot(d, d))
        np.abs(d, out=d)                          # d = |x − y| from here on
        self.sum_abs += float(np.add.reduce(d))
        self.max_abs = max(self.max_abs, float(np.maximum.reduce(d)))
        ay = np.abs(y, out=r)
        if float(np.minimum.reduce(ay)) > EPS64:
            rel = np.divide(d, ay, out=r)          # |x − y| / |y|
        else:
            mask = ay > EPS64
            rel = np.divide(d, ay, out=np.zeros_like(d), where=mask)
        self.sum_rel += float(np.add.reduce(rel))
        self.max_rel = max(self.max_rel, float(np.maximum.reduce(rel)))
        if self.hist is not None:
            nz = d[d > 0]
            self.zero_diff += d.size - nz.size
            if nz.size:
                idx = np.searchsorted(HIST_EDGES, np.log10(nz), side="right")
                self.hist += np.bincount(idx, minlength=len(HIST_EDGES) + 1)
        if self.kl_on:  # x and y are scratch (or masked copies) and not needed any more
            p = _minmax_floor(x, self.min_x, self.max_x)
            q = _minmax_floor(y, self.min_y, self.max_y)
            self.kl_sp += float(np.add.reduce(p))
            self.kl_sq += float(np.add.reduce(q))
            lr = np.divide(p, q, out=q)
            np.log(lr, out=lr)
            self.kl_spl += float(np.dot(p, lr))
            self.kl_done = True

    def result(self) -> dict[str, Any]:
        """Metrics (float, NaN when undefined) plus counts and a ``reasons`` list."""
        r: dict[str, Any] = {
            "n": self.n, "n_valid": self.n_valid,
            "nan_candidate": self.nan_x, "inf_candidate": self.inf_x,
            "nan_baseline": self.nan_y, "inf_baseline": self.inf_y,
            "nonfinite_mismatch": self.nonfinite_mismatch,
            "fp16_overflow_candidate": self.overflow_x, "fp16_overflow_baseline": self.overflow_y,
        }
        reasons: list[str] = []
        nv = self.n_valid
        nan = float("nan")
        if nv == 0:
            for k in METRICS:
                r[k] = nan
            reasons.append("no finite element pairs to compare" if self.n else "empty tensor")
        else:
            nx, ny = math.sqrt(self.sxx), math.sqrt(self.syy)
            if nv == 1:
                cos = 1.0
            elif nx == 0.0 and ny == 0.0:
                cos = 1.0
            elif nx == 0.0 or ny == 0.0:
                cos = nan
                reasons.append(f"cosine undefined: {'candidate' if nx == 0.0 else 'baseline'} is all zero")
            else:
                cos = min(1.0, self.sxy / (nx * ny))
            r["cosine"] = cos
            r["max_abs"] = self.max_abs
            r["max_rel"] = self.max_rel
            r["mean_rel"] = self.sum_rel / nv
            r["acc_rel"] = self.sum_rel
            r["rel_euclid"] = 0.0 if ny <= EPS64 else math.sqrt(self.sdd) / ny
            r["mae"] = self.sum_abs / nv
            r["rmse"] = math.sqrt(self.sdd / nv)
            if self.kl_done and self.kl_sp > 0 and self.kl_sq > 0:
                r["kl"] = max(0.0, self.kl_spl / self.kl_sp + math.log(self.kl_sq / self.kl_sp))
            else:
                r["kl"] = nan
            mx, my = self.sx / nv, self.sy / nv
            r["mean_candidate"], r["mean_baseline"] = mx, my
            r["std_candidate"] = math.sqrt(max(0.0, self.sxx / nv - mx * mx))
            r["std_baseline"] = math.sqrt(max(0.0, self.syy / nv - my * my))
            r["min_candidate"], r["max_candidate"] = self.min_x, self.max_x
            r["min_baseline"], r["max_baseline"] = self.min_y, self.max_y
        if self.nan_y or self.inf_y:
            reasons.append(f"baseline has {self.nan_y} NaN and {self.inf_y} Inf values")
        if self.nan_x or self.inf_x:
            reasons.append(f"candidate has {self.nan_x} NaN and {self.inf_x} Inf values")
        r["reasons"] = reasons
        if self.hist is not None:
            r["hist"] = {"edges_log10": HIST_EDGES.tolist(), "counts": self.hist.tolist(), "zero": self.zero_diff}
        return r


def _minmax_scale(lo: float, hi: float) -> float:
    """1/(hi − lo), or 0.0 for a constant (or overflowing) range: every value then maps to 0."""
    rng = hi - lo
    return 1.0 / rng if rng > 0 and math.isfinite(rng) else 0.0


def _minmax_floor(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """In place: (v − lo)/(hi − lo), floored at float32 eps (constant tensor → all eps)."""
    sc = _minmax_scale(lo, hi)
    if sc > 0.0:
        v -= lo
        v *= sc
    else:
        v[...] = 0.0
    np.maximum(v, EPS32, out=v)
    return v


# ---- optional numba kernels -------------------------------------------------------------

#: environment switch: ``ASCENDIFY_COMPARE_NUMBA=0`` forces the numpy path
NUMBA_ENV = "ASCENDIFY_COMPARE_NUMBA"
#: smallest compare with KL (element pairs in total) for which the default mode loads numba: its
#: import and first kernel load cost ~0.6-0.8 s CPU (compiling, first run only: ~5 s); with KL the
#: kernels save ~16-20 ns a pair (numpy's float64 log is scalar without AVX-512).  Measured
#: crossover, float32, one process per compare (bench/README.md): 32M pairs numpy 0.83 s against
#: numba 1.13 s, 48M 0.95 / 1.11 s, 64M 1.67 / 1.38 s.  Once numba is loaded the kernels serve
#: compares of any size.
FUSED_MIN_PAIRS = 48 << 20
#: the same without KL (one data pass, no log: the kernels save ~6-7 ns a pair): 64M pairs numpy
#: 0.56 s against numba 1.11 s, 96M 0.80 / 1.10 s, 128M 0.98 / 1.06 s
FUSED_MIN_PAIRS_NO_KL = 128 << 20
_NATIVE = (np.dtype(np.float32), np.dtype(np.float64))
_fused_lock = threading.Lock()
_fused_mod: Any = None      # the module once imported, False when unusable
_fused_compiled: set = set()


#: elements per chunk that :func:`ascendify.compare.engine.compare_refs` feeds when the kernels
#: run (the numpy path keeps ``io.DEFAULT_CHUNK``, 64k, for its float64 scratch to stay in L2): the
#: kernels stream from memory as fast, and 16x fewer chunks cost ~0.1 s less Python per 250M pairs
FUSED_CHUNK = 1 << 20


def fused_wanted(fused: bool | None, size_hint: int = -1, want_kl: bool = True, want_hist: bool = False) -> bool:
    """Whether an :class:`Accumulator` with these settings runs the numba kernels (imports numba
    when the size calls for them; see the class)."""
    if want_hist or fused is False:
        return False
    if fused is None and not _fused_mod and 0 <= size_hint < fused_min_pairs(want_kl):
        return False
    return fused_kernels(force=fused is True) is not None


def fused_min_pairs(want_kl: bool = True) -> int:
    """Element pairs from which a compare loads numba (:data:`FUSED_MIN_PAIRS`, or
    :data:`FUSED_MIN_PAIRS_NO_KL` for a compare without KL)."""
    return FUSED_MIN_PAIRS if want_kl else FUSED_MIN_PAIRS_NO_KL


def fused_kernels(force: bool = False) -> Any:
    """The numba kernel module :mod:`ascendify.compare._fused`, or None when numba is
    not installed, fails to import or compile, or (unless ``force``) the environment
    sets ``ASCENDIFY_COMPARE_NUMBA=0``.  numba is imported here, on the first compare,
    never at ``import ascendify``."""
    if not force and os.environ.get(NUMBA_ENV, "").strip().lower() in ("0", "false", "no", "off"):
        return None
    global _fused_mod
    if _fused_mod is None:
        with _fused_lock:
            if _fused_mod is None:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        from ascendify.compare import _fused
                    _fused_mod = _fused
                except Exception:  # noqa: BLE001 -- ImportError, or numba broken against this numpy
                    _fused_mod = False
    return _fused_mod or None


def _readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view: the kernels are compiled for read-only inputs only (mapped
    files give read-only chunks), so writable ones do not trigger a second compile."""
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


def _fused_failed() -> None:
    global _fused_mod
    _fused_mod = False


def _fused_ready(dx: np.dtype, dy: np.dtype) -> bool:
    """Compile (or load from numba's cache) the kernels for this dtype pair once, on
    tiny inputs, with numba's warnings silenced (e.g. a cache it cannot write) and
    checked against known values; False, and the kernels dropped, if that fails."""
    key = (dx.char, dy.char)
    if key in _fused_compiled:
        return True
    with _fused_lock:
        if key in _fused_compiled:
            return True
        fk = _fused_mod
        if not fk:
            return False
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fo = np.empty(fk.NF)
                io = np.empty(fk.NI, dtype=np.int64)
                for vals in (([1.0, 2.0, 4.0], [1.0, 2.0, 2.0]), ([1.0, np.nan, 4.0], [1.0, 2.0, 2.0])):
                    x = _readonly(np.array(vals[0], dtype=dx))
                    y = _readonly(np.array(vals[1], dtype=dy))
                    fk.data_pass(x, y, True, True, True, True, 1.0, 1 / 3, 1.0, 1.0, fo, io)
                    ok = fo[fk.MAX_ABS] == 2.0 and fo[fk.MAX_REL] == 1.0 and fo[fk.SDD] == 4.0
                    # p = max((x - 1)/3, eps), q = max(y - 1, eps): Σ p·log(p/q) = log(1/3)/3 (the NaN pair dropped: 0)
                    spl = math.log(1 / 3) / 3 if vals[0][1] == 2.0 else 0.0
                    ok = ok and abs(fo[fk.KL_SPL] - spl) <= 1e-15
                    ok = ok and int(io[fk.N_VALID]) == (3 if vals[0][1] == 2.0 else 2) and fo[fk.MAX_X] == 4.0
                    fk.range_pass(x, y, fo)
                    ok = ok and fo[0] == 1.0 and fo[1] == 4.0 and fo[2] == 1.0 and fo[3] == 2.0
                    if not ok:
                        raise ArithmeticError("numba kernel self-check failed")
        except Exception:  # noqa: BLE001 -- compile errors come in many numba/LLVM types
            _fused_failed()
            return False
        _fused_compiled.add(key)
        return True


ChunkPairs = Callable[[], Iterator[tuple[np.ndarray, np.ndarray]]]


@contextlib.contextmanager
def single_thread_blas() -> Iterator[None]:
    """Limit BLAS to one thread while comparing: the dot products run on 64k-element
    chunks, where waking BLAS worker threads costs more than it saves (and stalls badly
    on busy machines).  No-op without ``threadpoolctl``."""
    global _blas_depth, _blas_limiter
    with _blas_lock:  # reentrant and thread-safe: the first entry limits, the last exit restores
        if _blas_depth == 0:
            ctl = _blas_controller()
            _blas_limiter = ctl.limit(limits=1, user_api="blas") if ctl is not None else None
        _blas_depth += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_depth -= 1
            if _blas_depth == 0 and _blas_limiter is not None:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


_blas_lock = threading.Lock()
_blas_depth = 0
_blas_limiter: Any = None


@functools.lru_cache(maxsize=1)
def _blas_controller() -> Any:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def compute(pairs: ChunkPairs, want_kl: bool = True, want_hist: bool = False,
            fused: bool | None = None, size_hint: int = -1) -> dict[str, Any]:
    """Metrics for one tensor pair.  ``pairs()`` yields aligned 1-D chunks
    ``(candidate, baseline)``.  With ``want_kl`` it is called twice: a min/max-only
    range pass (KL normalises by each side's min and max), then the data pass that
    computes everything; without KL once.  ``fused``, ``size_hint``: see :class:`Accumulator`."""
    acc = Accumulator(want_hist=want_hist, fused=fused, size_hint=size_hint, want_kl=want_kl)
    with single_thread_blas():
        if want_kl:
            for x, y in pairs():
                acc.update_range(x, y)
            acc.start_kl()
        for x, y in pairs():
            acc.update(x, y)
    return acc.result()


def compare_arrays(candidate: Any, baseline: Any, chunk: int | None = None, want_kl: bool = True,
                   want_hist: bool = False, fused: bool | None = None) -> dict[str, Any]:
    """Metrics for two in-memory arrays of the same number of elements (any real
    dtype; shapes are not broadcast).  Raises ``AscendifyError`` if sizes differ.
    ``chunk``: elements per chunk; by default 64k, or :data:`FUSED_CHUNK` when the numba
    kernels run (the chunks ``compare`` feeds for files)."""
    x = np.asarray(candidate).reshape(-1)
    y = np.asarray(baseline).reshape(-1)
    if x.size != y.size:
        raise AscendifyError(f"sizes differ: candidate has {x.size} elements, baseline {y.size}")
    if chunk is None:
        chunk = FUSED_CHUNK if fused_wanted(fused, x.size, want_kl, want_hist) else 1 << 16

    def pairs() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for i in range(0, x.size, chunk):
            yield x[i:i + chunk], y[i:i + chunk]
        if x.size == 0:
            yield x, y

    return compute(pairs, want_kl=want_kl, want_hist=want_hist, fused=fused, size_hint=x.size)


def summarize(values: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Worst value of each metric over several samples (min cosine, max of the rest),
    ignoring NaN."""
    values = list(values)
    out: dict[str, float] = {}
    for k, (_, higher) in METRICS.items():
        vs = [v[k] for v in values if isinstance(v.get(k), float) and not math.isnan(v[k])]
        out[k] = (min(vs) if higher else max(vs)) if vs else float("nan")
    return out


__all__ = [
    "METRICS", "DEFAULT_THRESHOLDS", "FP16_MAX", "Accumulator", "compute", "compare_arrays", "metric_name",
    "parse_thresholds", "check_thresholds", "summarize", "HIST_EDGES", "fused_kernels", "NUMBA_ENV", "FUSED_MIN_PAIRS",
    "FUSED_MIN_PAIRS_NO_KL", "fused_min_pairs", "fused_wanted", "FUSED_CHUNK",
]
