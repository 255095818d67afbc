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
bit-identical (KL's ln(p/q) is not numpy's log of the rounded p/q but within 2 ulp of the
exact one); only the order of the sums differs (numba with ``reassoc`` vectorises them into
several partial sums, numpy sums pairwise or in BLAS), which changes the sums by a few units in
the last place, and KL (a difference of nearly equal sums for close tensors)
within rtol 1e-9 / atol 1e-12 (tests/compare/test_fused.py).

Data pass: on a chunk whose Σx² and Σy² come out finite (so every element is
finite) every reduction but KL's runs in one loop (``_sums_rel``) vectorised with only the
``reassoc`` fast-math flag, the maxima max |x−y| and max |x−y|/|y| taken on the bit patterns
(uint64: non-negative doubles order as their bits; LLVM vectorises that integer max, not the
float one, so the maxima stay exact); |x| > 65504 is counted only when the
range says it can occur (as in the numpy path); KL's p, q and Σ p·ln(p/q) in one more
vectorised loop (``_kl_sums``), with ln(p/q) computed branch-free from p and q (``_log_ratio``:
fdlibm's reduction and polynomial, one division, bit casts by two LLVM intrinsics) so that LLVM
vectorises it: numba's scalar ``log`` costs ~9 ns a value, and so does numpy's float64 log on CPUs
without AVX-512 (numpy vectorises it only with AVX-512F).  A chunk holding NaN/Inf (or
overflowing a float64 sum) reruns in ``_data_masked``: one scalar loop that counts NaN/Inf per side and the mismatches
and uses only positions where both sides are finite.  Range pass (KL's min/max):
``range_pass``, used by the caller only for chunks with NaN/Inf (numpy's SIMD
min/max on the raw dtype is faster for the others).
"""

# ruff: noqa: PLR1730, FURB136 -- selects and ``if v > m: m = v`` vectorise (lanes, integer maxima), max() does not

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


#: elements summed per block in the sum loops (``_sums_block``, ``_kl_block``), the block sums then
#: added up, so that 1M-element chunks (``metrics.FUSED_CHUNK``) lose no more to rounding than
#: 64k ones.  KL of the bench's first tensor
#: pair (15.6M float32 pairs) against a math.fsum / log1p reference: 2.2e-16 off with blocks,
#: 1.2e-15 without (1M chunks), 1.1e-15 on the numpy path
BLOCK = 1 << 14

#: lanes of the block-wise min/max (``_minmax``): elementwise updates of LANES partial results
#: vectorise without any fast-math flag
LANES = 128


@_jit(fastmath=_SUMS, error_model="numpy")
def _sums_block(x, y, mab, mrel):
    sxx = syy = sxy = sx = sy = sdd = sab = srel = 0.0
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
        ad = abs(d)
        sab += ad
        ab = abs(b)
        r = ad / ab if ab > EPS64 else 0.0
        srel += r
        ua = _f64_bits(ad)
        ur = _f64_bits(r)
        mab = ua if ua > mab else mab
        mrel = ur if ur > mrel else mrel
    return sxx, syy, sxy, sx, sy, sdd, sab, srel, mab, mrel


@_jit(fastmath=_SUMS, error_model="numpy")
def _sums_rel(x, y, fo):
    """The data pass's reductions but KL's, in one loop vectorised by ``reassoc``: Σx², Σy², Σxy,
    Σx, Σy, Σ(x−y)², Σ|x−y|, Σ|x−y|/|y| (0 where |y| ≤ ε), and max |x−y|, max |x−y|/|y|.
    The maxima are taken on the bit patterns as uint64: both values are ≥ +0.0 (``abs``, or the
    0.0 of a masked position), and non-negative doubles, +inf included, order as their bits
    do, so the maxima are exact; LLVM vectorises the integer max, not the float one.
    The sums run per BLOCK elements (``_sums_block``), the block sums then added.
    ``error_model="numpy"``: the guarded division needs no zero-division branch."""
    sxx = syy = sxy = sx = sy = sdd = sab = srel = 0.0
    mab = np.uint64(0)
    mrel = np.uint64(0)
    n = x.size
    for s0 in range(0, n, BLOCK):
        bxx, byy, bxy, bx, by, bdd, bab, brel, mab, mrel = _sums_block(x[s0:s0 + BLOCK], y[s0:s0 + BLOCK], mab, mrel)
        sxx += bxx
        syy += byy
        sxy += bxy
        sx += bx
        sy += by
        sdd += bdd
        sab += bab
        srel += brel
    fo[SXX] = sxx
    fo[SYY] = syy
    fo[SXY] = sxy
    fo[SX] = sx
    fo[SY] = sy
    fo[SDD] = sdd
    fo[SUM_ABS] = sab
    fo[SUM_REL] = srel
    fo[MAX_ABS] = _bits_f64(mab)
    fo[MAX_REL] = _bits_f64(mrel)


@_jit(fastmath=_SUMS)
def _count_over(v):
    """Number of |v| > 65504 (the float16 maximum)."""
    c = 0
    for i in range(v.size):
        c += abs(np.float64(v[i])) > FP16_MAX
    return c


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


# fdlibm e_log.c (Sun Microsystems, freely distributable; as in musl before 2018): ln(2) split
# in two, and the minimax coefficients of log((1+s)/(1-s)) = 2s + s·R(s²)
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LG1, _LG2, _LG3, _LG4 = 6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, \
    2.222219843214978396e-01
_LG5, _LG6, _LG7 = 1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01


_SQRT2 = 1.4142135623730951
_MANT = np.uint64(0x000FFFFFFFFFFFFF)
_ONE = np.uint64(0x3FF0000000000000)
_MAGIC = np.uint64(0x4330000000000000)  # 2**52 as float64 bits: (these + e) - these = e, exactly


@numba.njit(inline="always")
def _log_ratio(p, q):
    """ln(p/q) for positive normal float64 p, q (KL's p and q: both in [eps32, ~1]), with one
    division and no p/q: p = mp·2^ep and q = mq·2^eq (mantissas in [1, 2), split by bit masks,
    exactly), mp/mq brought into [√½, √2) by halving one of them (exact), then fdlibm's
    reduction log(m) = 2s + s·R(s²) with s = (mp − mq)/(mp + mq) (mp − mq is exact) and
    fdlibm's minimax R.  Within 2 ulp of the exact ln(p/q) (measured 1.8 ulp, 2.4e-16 absolute
    at most: tests/compare/test_fused.py), where numpy's log of the rounded p/q is off by up to
    2.7e-16, and for close p and q by millions of ulp of the tiny result; exactly 0 for p = q
    and ln 2·k for p/q = 2^k.  Branch-free integer and float operations only, so LLVM
    vectorises the loop around it: numpy's float64 log is scalar on CPUs without AVX-512
    (~6-9 ns a value against ~2 ns for this, KL's p, q and sums included)."""
    up = _f64_bits(p)
    uq = _f64_bits(q)
    k = _bits_f64(_MAGIC + (up >> np.uint64(52))) - _bits_f64(_MAGIC + (uq >> np.uint64(52)))  # ep - eq, exact
    mp = _bits_f64((up & _MANT) | _ONE)
    mq = _bits_f64((uq & _MANT) | _ONE)
    big = mp > _SQRT2 * mq
    small = mq > _SQRT2 * mp
    mp = mp * 0.5 if big else mp
    mq = mq * 0.5 if small else mq
    k = k + 1.0 if big else k
    k = k - 1.0 if small else k
    s = (mp - mq) / (mp + mq)
    z = s * s
    w = z * z
    r = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7))) + w * (_LG2 + w * (_LG4 + w * _LG6))
    return k * _LN2_HI + (2.0 * s + (s * r + k * _LN2_LO))


@_jit(fastmath=_SUMS, error_model="numpy")
def _kl_block(x, y, lo_x, sc_x, lo_y, sc_y):
    sp = sq = spl = 0.0
    for i in range(x.size):
        p = (np.float64(x[i]) - lo_x) * sc_x
        q = (np.float64(y[i]) - lo_y) * sc_y
        p = p if p > EPS32 else EPS32
        q = q if q > EPS32 else EPS32
        sp += p
        sq += q
        spl += p * _log_ratio(p, q)
    return sp, sq, spl


@_jit(fastmath=_SUMS, error_model="numpy")
def _kl_sums(x, y, lo_x, sc_x, lo_y, sc_y, fo):
    """KL's sums: p = max((x − lo_x)·sc_x, eps32) and q likewise from y, elementwise as the numpy
    path, and Σp, Σq, Σ p·ln(p/q) into ``fo[KL_SP]``, ``fo[KL_SQ]``, ``fo[KL_SPL]``, in one
    vectorised loop per BLOCK elements (``error_model="numpy"``: no zero-division branch)."""
    sp = sq = spl = 0.0
    n = x.size
    for s0 in range(0, n, BLOCK):
        bp, bq, bpl = _kl_block(x[s0:s0 + BLOCK], y[s0:s0 + BLOCK], lo_x, sc_x, lo_y, sc_y)
        sp += bp
        sq += bq
        spl += bpl
    fo[KL_SP] = sp
    fo[KL_SQ] = sq
    fo[KL_SPL] = spl


@_jit()
def _data_finite(x, y, want_minmax, ov_x, ov_y, kl_on, lo_x, sc_x, lo_y, sc_y, fo, io):
    """The data pass if the chunk is all finite: True then; False (and ``fo``/``io``
    partly written) if it holds NaN/Inf or a float64 sum overflowed.  Σx² and Σy²
    are finite only when every x and y is (the numpy path's test too)."""
    _sums_rel(x, y, fo)
    if not math.isfinite(fo[SXX] + fo[SYY] + fo[SDD] + fo[SX] + fo[SY] + fo[SXY] + fo[SUM_ABS] + fo[SUM_REL]):
        return False
    if want_minmax:
        _minmax(x, y, fo, MIN_X)
        ov_x = ov_x and (fo[MAX_X] > FP16_MAX or fo[MIN_X] < -FP16_MAX)
        ov_y = ov_y and (fo[MAX_Y] > FP16_MAX or fo[MIN_Y] < -FP16_MAX)
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
                splk += p * _log_ratio(p, q)
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
