"""Optional numba kernels for :class:`ascendify.compare.metrics.Accumulator`.

Imported only by :func:`ascendify.compare.metrics.fused_kernels`, i.e. when a compare
runs, never when ``ascendify`` is imported.  Importing this module imports numba
(raises ``ImportError`` without it) and defines the kernels; each kernel compiles on
its first call for the (candidate, baseline) dtype pair (float32 / float64; other
dtypes are converted to float64 by the caller), cached on disk where numba can write
(``cache=True``; without a writable cache directory the kernels are compiled each run).

The kernels reproduce the numpy path of ``Accumulator.update`` / ``update_range``
element for element: the same float64 operations per element (x − y, |x − y|/|y|,
(x − lo)·(1/(hi − lo)) floored at float32 eps, ...), so counts, minima and maxima are
bit-identical; only the order of the sums differs (numba with ``reassoc`` vectorises them
into several partial sums, numpy sums pairwise or in BLAS), which changes the sums by a
few units in the last place, and KL (a difference of nearly equal sums for close tensors)
within rtol 1e-9 / atol 1e-12 (tests/compare/test_fused.py).

Data pass: on a chunk whose Σx² and Σy² come out finite (so every element is
finite) the sums run vectorised with only the ``reassoc`` fast-math flag, and the
maxima, minima and Σ|x−y|/|y| in LANES partial results (elementwise updates, which
LLVM vectorises without fast-math flags); |x| > 65504 is counted only when the
range says it can occur (as in the numpy path); KL's p, q, p/q and Σ p·ln(p/q) in one more
vectorised loop (``_kl_sums``), with fdlibm's log written branch-free (``_log_pos``, bit casts by
two LLVM intrinsics) so that LLVM vectorises it: numba's scalar ``log`` costs ~9 ns a value, and
so does numpy's float64 log on CPUs without AVX-512 (numpy vectorises it only with AVX-512F),
against ~2 ns here, within 1 ulp of numpy's.  A chunk holding NaN/Inf (or overflowing a float64 sum) reruns in
``_data_masked``: one scalar loop that counts NaN/Inf per side and the mismatches
and uses only positions where both sides are finite.  Range pass (KL's min/max):
``range_pass``, used by the caller only for chunks with NaN/Inf (numpy's SIMD
min/max on the raw dtype is faster for the others).
"""

# ruff: noqa: PLR1730, FURB136 -- selects and ``if v > m: m = v`` vectorise in the lane loops, numba's max() does not

from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)
FP16_MAX = 65504.0

# float outputs of the data pass (indices into ``fo``)
(SXX, SYY, SXY, SX, SY, SDD, SUM_ABS, MAX_ABS, SUM_REL, MAX_REL, MIN_X, MAX_X, MIN_Y, MAX_Y, KL_SP, KL_SQ,
 KL_SPL) = range(17)
NF = 17
# integer outputs (indices into ``io``)
N_VALID, NAN_X, INF_X, NAN_Y, INF_Y, MISMATCH, OVER_X, OVER_Y = range(8)
NI = 8

_SUMS = {"reassoc"}  # only reassociation (vectorised sums); NaN/Inf still propagate, no FMA contraction


def _jit(**flags):
    """``numba.njit(nogil=True, cache=True, ...)``; without caching if numba finds no
    writable cache location for this file (it raises at decoration time then)."""
    def deco(fn):
        try:
            return numba.njit(nogil=True, cache=True, **flags)(fn)
        except Exception:  # noqa: BLE001 -- no cache locator (read-only install, no writable home)
            return numba.njit(nogil=True, cache=False, **flags)(fn)
    return deco


@_jit(fastmath=_SUMS)
def all_finite(x, y):
    """True when every element of both chunks is finite (x·0 is NaN for NaN/±Inf)."""
    s = 0.0
    for i in range(x.size):
        s += np.float64(x[i]) * 0.0 + np.float64(y[i]) * 0.0
    return s == 0.0


#: lanes of the block-wise min/max (and |x−y|/|y| sum): elementwise updates of B
#: partial results vectorise without any fast-math flag
LANES = 128


@_jit(fastmath=_SUMS)
def _sums(x, y, fo):
    """Sums without division, vectorised by ``reassoc``: Σx², Σy², Σxy, Σx, Σy,
    Σ(x−y)², Σ|x−y|."""
    sxx = syy = sxy = sx = sy = sdd = sab = 0.0
    for i in range(x.size):
        a = np.float64(x[i])
        b = np.float64(y[i])
        sxx += a * a
        syy += b * b
        sxy += a * b
        sx += a
        sy += b
        d = a - b
        sdd += d * d
        sab += abs(d)
    fo[SXX] = sxx
    fo[SYY] = syy
    fo[SXY] = sxy
    fo[SX] = sx
    fo[SY] = sy
    fo[SDD] = sdd
    fo[SUM_ABS] = sab


@_jit(fastmath=_SUMS)
def _count_over(v):
    """Number of |v| > 65504 (the float16 maximum)."""
    c = 0
    for i in range(v.size):
        c += abs(np.float64(v[i])) > FP16_MAX
    return c


@_jit()
def _rel_max_minmax(x, y, fo):
    """:func:`_rel_max` and :func:`_minmax` (into fo[MIN_X:MIN_X + 4]) in one loop."""
    mab = np.zeros(LANES)
    mrel = np.zeros(LANES)
    srel = np.zeros(LANES)
    mnx = np.full(LANES, np.inf)
    mxx = np.full(LANES, -np.inf)
    mny = np.full(LANES, np.inf)
    mxy = np.full(LANES, -np.inf)
    n = x.size
    m = n - n % LANES
    for i in range(0, m, LANES):
        for j in range(LANES):
            a = np.float64(x[i + j])
            b = np.float64(y[i + j])
            ad = abs(a - b)
            ab = abs(b)
            r = ad / ab if ab > EPS64 else 0.0
            if ad > mab[j]:
                mab[j] = ad
            if r > mrel[j]:
                mrel[j] = r
            srel[j] += r
            if a < mnx[j]:
                mnx[j] = a
            if a > mxx[j]:
                mxx[j] = a
            if b < mny[j]:
                mny[j] = b
            if b > mxy[j]:
                mxy[j] = b
    for i in range(m, n):
        a = np.float64(x[i])
        b = np.float64(y[i])
        ad = abs(a - b)
        ab = abs(b)
        r = ad / ab if ab > EPS64 else 0.0
        if ad > mab[0]:
            mab[0] = ad
        if r > mrel[0]:
            mrel[0] = r
        srel[0] += r
        if a < mnx[0]:
            mnx[0] = a
        if a > mxx[0]:
            mxx[0] = a
        if b < mny[0]:
            mny[0] = b
        if b > mxy[0]:
            mxy[0] = b
    fo[MAX_ABS] = mab.max()
    fo[MAX_REL] = mrel.max()
    fo[SUM_REL] = srel.sum()
    fo[MIN_X] = mnx.min()
    fo[MAX_X] = mxx.max()
    fo[MIN_Y] = mny.min()
    fo[MAX_Y] = mxy.max()


@_jit()
def _rel_max(x, y, fo):
    """max |x−y|, max and Σ of |x−y|/|y| (0 where |y| ≤ ε) in LANES partial results."""
    mab = np.zeros(LANES)
    mrel = np.zeros(LANES)
    srel = np.zeros(LANES)
    n = x.size
    m = n - n % LANES
    for i in range(0, m, LANES):
        for j in range(LANES):
            b = np.float64(y[i + j])
            ad = abs(np.float64(x[i + j]) - b)
            ab = abs(b)
            r = ad / ab if ab > EPS64 else 0.0
            if ad > mab[j]:
                mab[j] = ad
            if r > mrel[j]:
                mrel[j] = r
            srel[j] += r
    for i in range(m, n):
        b = np.float64(y[i])
        ad = abs(np.float64(x[i]) - b)
        ab = abs(b)
        r = ad / ab if ab > EPS64 else 0.0
        if ad > mab[0]:
            mab[0] = ad
        if r > mrel[0]:
            mrel[0] = r
        srel[0] += r
    fo[MAX_ABS] = mab.max()
    fo[MAX_REL] = mrel.max()
    fo[SUM_REL] = srel.sum()


@_jit()
def _minmax(x, y, fo, at):
    """min x, max x, min y, max y into fo[at:at + 4] (±inf for empty input)."""
    mnx = np.full(LANES, np.inf)
    mxx = np.full(LANES, -np.inf)
    mny = np.full(LANES, np.inf)
    mxy = np.full(LANES, -np.inf)
    n = x.size
    m = n - n % LANES
    for i in range(0, m, LANES):
        for j in range(LANES):
            a = np.float64(x[i + j])
            b = np.float64(y[i + j])
            if a < mnx[j]:
                mnx[j] = a
            if a > mxx[j]:
                mxx[j] = a
            if b < mny[j]:
                mny[j] = b
            if b > mxy[j]:
                mxy[j] = b
    for i in range(m, n):
        a = np.float64(x[i])
        b = np.float64(y[i])
        if a < mnx[0]:
            mnx[0] = a
        if a > mxx[0]:
            mxx[0] = a
        if b < mny[0]:
            mny[0] = b
        if b > mxy[0]:
            mxy[0] = b
    fo[at] = mnx.min()
    fo[at + 1] = mxx.max()
    fo[at + 2] = mny.min()
    fo[at + 3] = mxy.max()


@intrinsic
def _f64_bits(typingctx, x):
    """The bits of a float64 as uint64 (an LLVM bitcast: vectorises)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.uint64(types.float64), codegen


@intrinsic
def _bits_f64(typingctx, u):
    """The float64 of these uint64 bits (an LLVM bitcast: vectorises)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.uint64), codegen


# fdlibm e_log.c (Sun Microsystems, freely distributable; as in musl before 2018): ln(2) split
# in two, and the minimax coefficients of log((1+s)/(1-s)) = 2s + s·R(s²)
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LG1, _LG2, _LG3, _LG4 = 6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, \
    2.222219843214978396e-01
_LG5, _LG6, _LG7 = 1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01
_TWO52 = 4503599627370496.0


@numba.njit(inline="always")
def _log_pos(v):
    """ln(v) for a positive normal float64 (KL's p/q: both in [eps32, 1], so v lies in
    [1.2e-7, 8.4e6]), fdlibm's algorithm, error < 1 ulp (numpy's log: the same value but for
    the last bit in ~0.5% of random inputs, tests/compare/test_fused.py).  Branch-free
    integer and float operations only, so LLVM vectorises the loop around it; numpy's float64
    log is scalar on CPUs without AVX-512 (~9 ns a value against ~2 ns here)."""
    u = _f64_bits(v)
    hx = (u >> np.uint64(32)) + np.uint64(0x3FF00000 - 0x3FE6A09E)  # mantissa into [sqrt(2)/2, sqrt(2))
    e = hx >> np.uint64(20)                                             # biased exponent k + 1023
    hx = (hx & np.uint64(0x000FFFFF)) + np.uint64(0x3FE6A09E)
    f = _bits_f64((hx << np.uint64(32)) | (u & np.uint64(0xFFFFFFFF))) - 1.0
    dk = _bits_f64(np.uint64(0x4330000000000000) + e) - (_TWO52 + 1023.0)  # k as float64, exactly
    hfsq = 0.5 * f * f
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    r = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7))) + w * (_LG2 + w * (_LG4 + w * _LG6))
    return s * (hfsq + r) + dk * _LN2_LO - hfsq + f + dk * _LN2_HI


@_jit(fastmath=_SUMS, error_model="numpy")
def _kl_sums(x, y, lo_x, sc_x, lo_y, sc_y, fo):
    """KL's sums: p = max((x − lo_x)·sc_x, eps32) and q likewise from y, elementwise as the numpy
    path, and Σp, Σq, Σ p·ln(p/q) into ``fo[KL_SP]``, ``fo[KL_SQ]``, ``fo[KL_SPL]``, in one
    vectorised loop (``error_model="numpy"``: q ≥ eps32, so p/q never divides by zero)."""
    sp = sq = spl = 0.0
    for i in range(x.size):
        p = (np.float64(x[i]) - lo_x) * sc_x
        q = (np.float64(y[i]) - lo_y) * sc_y
        p = p if p > EPS32 else EPS32
        q = q if q > EPS32 else EPS32
        sp += p
        sq += q
        spl += p * _log_pos(p / q)
    fo[KL_SP] = sp
    fo[KL_SQ] = sq
    fo[KL_SPL] = spl


@_jit()
def _data_finite(x, y, want_minmax, ov_x, ov_y, kl_on, lo_x, sc_x, lo_y, sc_y, fo, io):
    """The data pass if the chunk is all finite: True then; False (and ``fo``/``io``
    partly written) if it holds NaN/Inf or a float64 sum overflowed.  Σx² and Σy²
    are finite only when every x and y is (the numpy path's test too)."""
    _sums(x, y, fo)
    if not math.isfinite(fo[SXX] + fo[SYY] + fo[SDD] + fo[SX] + fo[SY] + fo[SXY] + fo[SUM_ABS]):
        return False
    if want_minmax:
        _rel_max_minmax(x, y, fo)
        ov_x = ov_x and (fo[MAX_X] > FP16_MAX or fo[MIN_X] < -FP16_MAX)
        ov_y = ov_y and (fo[MAX_Y] > FP16_MAX or fo[MIN_Y] < -FP16_MAX)
    else:
        _rel_max(x, y, fo)
    if not math.isfinite(fo[SUM_REL]):
        return False
    io[OVER_X] = _count_over(x) if ov_x else 0
    io[OVER_Y] = _count_over(y) if ov_y else 0
    if kl_on:
        _kl_sums(x, y, lo_x, sc_x, lo_y, sc_y, fo)
    io[N_VALID] = x.size
    io[NAN_X] = 0
    io[INF_X] = 0
    io[NAN_Y] = 0
    io[INF_Y] = 0
    io[MISMATCH] = 0
    return True


@_jit()
def _data_masked(x, y, kl_on, lo_x, sc_x, lo_y, sc_y, fo, io):
    sxx = syy = sxy = sx = sy = sdd = sab = srel = 0.0
    mab = mrel = 0.0
    mnx = mny = np.inf
    mxx = mxy = -np.inf
    nv = nanx = infx = nany = infy = mis = ox = oy = 0
    spk = sqk = splk = 0.0
    for i in range(x.size):
        a = np.float64(x[i])
        b = np.float64(y[i])
        fa = math.isfinite(a)
        fb = math.isfinite(b)
        if fa and fb:
            sxx += a * a
            syy += b * b
            sxy += a * b
            sx += a
            sy += b
            d = a - b
            sdd += d * d
            ad = abs(d)
            sab += ad
            if ad > mab:
                mab = ad
            ab = abs(b)
            r = ad / ab if ab > EPS64 else 0.0
            srel += r
            if r > mrel:
                mrel = r
            if a < mnx:
                mnx = a
            if a > mxx:
                mxx = a
            if b < mny:
                mny = b
            if b > mxy:
                mxy = b
            if abs(a) > FP16_MAX:
                ox += 1
            if ab > FP16_MAX:
                oy += 1
            if kl_on:
                p = (a - lo_x) * sc_x
                if not p > EPS32:
                    p = EPS32
                q = (b - lo_y) * sc_y
                if not q > EPS32:
                    q = EPS32
                spk += p
                sqk += q
                splk += p * _log_pos(p / q)
            nv += 1
        else:
            na = math.isnan(a)
            nb = math.isnan(b)
            if na:
                nanx += 1
            elif not fa:
                infx += 1
            if nb:
                nany += 1
            elif not fb:
                infy += 1
            if not (a == b or (na and nb)):
                mis += 1
    fo[SXX] = sxx
    fo[SYY] = syy
    fo[SXY] = sxy
    fo[SX] = sx
    fo[SY] = sy
    fo[SDD] = sdd
    fo[SUM_ABS] = sab
    fo[MAX_ABS] = mab
    fo[SUM_REL] = srel
    fo[MAX_REL] = mrel
    fo[MIN_X] = mnx
    fo[MAX_X] = mxx
    fo[MIN_Y] = mny
    fo[MAX_Y] = mxy
    fo[KL_SP] = spk
    fo[KL_SQ] = sqk
    fo[KL_SPL] = splk
    io[N_VALID] = nv
    io[NAN_X] = nanx
    io[INF_X] = infx
    io[NAN_Y] = nany
    io[INF_Y] = infy
    io[MISMATCH] = mis
    io[OVER_X] = ox
    io[OVER_Y] = oy


@_jit()
def data_pass(x, y, want_minmax, ov_x, ov_y, kl_on, lo_x, sc_x, lo_y, sc_y, fo, io):
    """One chunk of the data pass.  ``x``, ``y``: 1-D C-contiguous float32/float64 of
    the same length.  With ``kl_on``, KL's sums Σp, Σq and Σ p·ln(p/q) over the valid positions
    go to ``fo[KL_SP]``, ``fo[KL_SQ]``, ``fo[KL_SPL]`` (p and p/q elementwise as the numpy path,
    the log within 1 ulp of numpy's, summed in another order than numpy's pairwise sum and dot
    product: KL agrees with the numpy path to rounding, within rtol 1e-9 / atol 1e-12);
    ``sc_*`` = 1/(hi − lo), or 0.0 for a constant side (then p = eps32).  Writes
    ``fo`` (float64[NF]; min/max only with ``want_minmax``) and ``io`` (int64[NI]).
    ``ov_x``/``ov_y``: False when |x| (|y|) cannot exceed 65504 (from the range pass), so
    the float16-overflow count is skipped, as in the numpy path.
    Chunks holding NaN/Inf, or whose float64 sums overflow (float64 inputs near
    1e154), run in the scalar masked kernel."""
    if not _data_finite(x, y, want_minmax, ov_x, ov_y, kl_on, lo_x, sc_x, lo_y, sc_y, fo, io):
        _data_masked(x, y, kl_on, lo_x, sc_x, lo_y, sc_y, fo, io)


@_jit()
def _range_masked(x, y, out):
    mnx = mny = np.inf
    mxx = mxy = -np.inf
    for i in range(x.size):
        a = np.float64(x[i])
        b = np.float64(y[i])
        if math.isfinite(a) and math.isfinite(b):
            if a < mnx:
                mnx = a
            if a > mxx:
                mxx = a
            if b < mny:
                mny = b
            if b > mxy:
                mxy = b
    out[0] = mnx
    out[1] = mxx
    out[2] = mny
    out[3] = mxy


@_jit()
def range_pass(x, y, out):
    """min x, max x, min y, max y over positions where both sides are finite, into
    ``out`` (float64[4]; ±inf when there is none).  Same input rules as :func:`data_pass`."""
    if all_finite(x, y):
        _minmax(x, y, out, 0)
    else:
        _range_masked(x, y, out)
