"""Pair baseline and candidate tensors and compare them, streamed.

Pairing (baseline key ``sample/output``, the ``ascendify baseline`` layout):
exact key first; then the .om-runner spellings of output *i* of a sample
(``sample_i``, ``sample/i``, ``sample/output_i``, ``sample_output_i``); then a
unique path-suffix match (``run1/sample/out`` ↔ ``sample/out``); for a baseline
with a single sample, the bare output name or index.  Shapes are never
broadcast: different element counts are a per-output failure; the same count
in a different shape is compared element-wise in C order and noted.
"""

from __future__ import annotations

import contextlib
import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

import numpy as np

from ascendify.compare import metrics as M
from ascendify.compare.io import DEFAULT_CHUNK, Collection, TensorRef, keep_mapped
from ascendify.errors import AscendifyError


def split_key(key: str) -> tuple[str, str]:
    """``"a/b/out"`` → ``("a/b", "out")``; ``"out"`` → ``("", "out")``."""
    if "/" in key:
        s, o = key.rsplit("/", 1)
        return s, o
    return "", key


def _output_order(base: Collection) -> dict[str, list[str]]:
    order: dict[str, list[str]] = {}
    if base.meta and isinstance(base.meta.get("outputs"), list):
        outs = [str(o) for o in base.meta["outputs"]]
        for key in base.refs:
            s, _ = split_key(key)
            order.setdefault(s, outs)
        return order
    for key in base.refs:
        s, o = split_key(key)
        order.setdefault(s, []).append(o)
    return order


@dataclass
class Pairing:
    pairs: list[tuple[str, TensorRef, TensorRef]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)   # baseline keys with no candidate
    extra: list[str] = field(default_factory=list)     # candidate keys not used


def pair(base: Collection, cand: Collection) -> Pairing:
    """Pair tensors of ``base`` and ``cand`` (see module docstring)."""
    res = Pairing()
    used: set[str] = set()
    order = _output_order(base)
    samples = {split_key(k)[0] for k in base.refs}
    unmatched = []
    for key in base.refs:
        if key in cand.refs:
            res.pairs.append((key, base.refs[key], cand.refs[key]))
            used.add(key)
        else:
            unmatched.append(key)
    free = [k for k in cand.refs if k not in used]
    for key in unmatched:
        s, o = split_key(key)
        outs = order.get(s, [])
        i = outs.index(o) if o in outs else -1
        alts = []
        if i >= 0:
            pre = f"{s}/" if s else ""
            alts += [f"{s}_{i}", f"{pre}{i}", f"{pre}output_{i}", f"{s}_output_{i}", f"{s}/{os.path.basename(s)}_{i}"]
        if len(samples) == 1:
            alts += [o] + ([f"output_{i}", str(i)] if i >= 0 else [])
        hit = next((a for a in alts if a in cand.refs and a not in used), None)
        if hit is None:  # runner output folders often add a timestamp folder: match a unique path suffix
            for want in [key] + alts:
                suff = [c for c in free if c not in used and (c.endswith("/" + want) or want.endswith("/" + c))]
                if len(suff) == 1:
                    hit = suff[0]
                    break
        if hit is None:
            res.missing.append(key)
        else:
            used.add(hit)
            res.pairs.append((key, base.refs[key], cand.refs[hit]))
    res.extra = [k for k in cand.refs if k not in used]
    return res


def aligned(a: Iterator[np.ndarray], b: Iterator[np.ndarray]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Re-slice two chunk streams of the same total length into equal-length pairs."""
    ca = cb = None
    ia = ib = 0
    while True:
        if ca is None or ia >= ca.size:
            ca = next(a, None)
            ia = 0
            if ca is None:
                break
            if ca.size == 0:
                ca = None
                continue
        if cb is None or ib >= cb.size:
            cb = next(b, None)
            ib = 0
            if cb is None:
                break
            if cb.size == 0:
                cb = None
                continue
        k = min(ca.size - ia, cb.size - ib)
        yield ca[ia:ia + k], cb[ib:ib + k]
        ia += k
        ib += k


def compare_refs(key: str, bref: TensorRef, cref: TensorRef, thresholds: dict[str, float],
                 want_kl: bool = True, want_hist: bool = False, chunk: int = DEFAULT_CHUNK,
                 bin_dtype: Optional[str] = None, size_hint: int = -1) -> dict[str, Any]:
    """One result row: ``sample``, ``output``, ``baseline``/``candidate`` (where), shapes,
    dtypes, metrics and counts (see :class:`ascendify.compare.metrics.Accumulator`),
    ``failed`` (monitor strings), ``notes`` and ``status`` (``PASS``/``FAIL``).
    ``size_hint``: element pairs of the whole compare (picks the numba kernels or not,
    see :class:`ascendify.compare.metrics.Accumulator`; -1: this tensor's size).  With the
    kernels and the default ``chunk`` the chunks are :data:`ascendify.compare.metrics.FUSED_CHUNK`.
    Raises ``AscendifyError`` when a raw .bin's size does not fit the baseline's shape."""
    s, o = split_key(key)
    if cref.shape is None and bref.shape is None:
        raise AscendifyError(f"{bref.where} and {cref.where}: raw .bin on both sides with no shape; give --bin-shape "
                             "[NAME:]d0,d1,... or a sidecar NAME.bin.json")
    if cref.shape is None:  # raw .bin without spec: take the baseline's shape
        cref.resolve_bin(bref.shape or (), bin_dtype or "float32")
    if bref.shape is None:
        bref.resolve_bin(cref.shape or (), bin_dtype or "float32")
    row: dict[str, Any] = {
        "sample": s, "output": o, "key": key, "baseline": bref.where, "candidate": cref.where,
        "shape_baseline": list(bref.shape or ()), "shape_candidate": list(cref.shape or ()),
        "dtype_baseline": str(bref.dtype), "dtype_candidate": str(cref.dtype), "notes": [],
    }
    if bref.size != cref.size:
        row.update({"status": "FAIL", "failed": [
            f"shape mismatch: baseline {tuple(bref.shape or ())} ({bref.size} elements) vs candidate "
            f"{tuple(cref.shape or ())} ({cref.size} elements); not broadcast"]})
        for k in M.METRICS:
            row[k] = float("nan")
        return row
    if tuple(bref.shape or ()) != tuple(cref.shape or ()):
        row["notes"].append(f"shapes differ ({tuple(bref.shape or ())} vs {tuple(cref.shape or ())}) with the same "
                            "element count: compared element-wise in C order")

    hint = size_hint if size_hint >= 0 else bref.size
    if chunk == DEFAULT_CHUNK and M.fused_wanted(None, hint, want_kl, want_hist):
        chunk = M.FUSED_CHUNK  # the numba kernels take bigger chunks: fewer Python steps

    def pairs() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return aligned(cref.chunks(chunk), bref.chunks(chunk))

    # two passes over the same files (KL's range pass, then the data pass): each file mapped once for both
    with keep_mapped() if want_kl else contextlib.nullcontext():
        res = M.compute(pairs, want_kl=want_kl, want_hist=want_hist, size_hint=hint)
    row["notes"].extend(res.pop("reasons"))
    row.update(res)
    failed = M.check_thresholds(res, thresholds)
    if res["nonfinite_mismatch"]:
        failed.append(f"{res['nonfinite_mismatch']} positions are NaN/Inf on one side only")
    if res["n"] and not res["n_valid"]:
        failed.append("no finite values to compare")
    row["failed"] = failed
    row["status"] = "FAIL" if failed else "PASS"
    return row


@dataclass
class Report:
    rows: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
    missing: list[str]
    extra: list[str]
    thresholds: dict[str, float]
    verdict: str

    def as_dict(self) -> dict[str, Any]:
        rows = [{k: _jsonable(v) for k, v in r.items()} for r in self.rows]
        return {
            "verdict": self.verdict, "thresholds": self.thresholds,
            "threshold_source": "msit/msprobe offline compare defaults (accuracy-profiling-atc.md §2.4) unless overridden",
            "outputs": [{k: _jsonable(v) for k, v in o.items()} for o in self.outputs],
            "rows": rows, "missing_in_candidate": self.missing, "extra_in_candidate": self.extra,
        }


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, (np.floating, np.integer)):
        return _jsonable(v.item())
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    return v


def compare_collections(base: Collection, cand: Collection, thresholds: Optional[dict[str, float]] = None,
                        metrics: Optional[list[str]] = None, want_hist: bool = False, jobs: int = 1,
                        bin_dtype: Optional[str] = None) -> Report:
    """Compare every paired tensor; ``metrics`` limits which monitors are checked
    (all are computed, except KL when it is not wanted)."""
    th = dict(M.DEFAULT_THRESHOLDS if thresholds is None else thresholds)
    if metrics:
        th = {k: v for k, v in th.items() if k in metrics}
    want_kl = not metrics or "kl" in metrics
    p = pair(base, cand)
    if not p.pairs:
        raise AscendifyError(
            f"no tensor of {cand.path} pairs with one of {base.path} (baseline keys e.g. "
            f"{', '.join(list(base.refs)[:3])}; candidate keys e.g. {', '.join(list(cand.refs)[:3])})")

    total = sum(max(b.size, c.size, 0) for _, b, c in p.pairs)  # raw .bin without a shape: counted as 0

    def one(item: tuple[str, TensorRef, TensorRef]) -> dict[str, Any]:
        return compare_refs(item[0], item[1], item[2], th, want_kl=want_kl, want_hist=want_hist, bin_dtype=bin_dtype,
                            size_hint=total)

    with M.single_thread_blas():  # set once here, so the per-tensor limits in worker threads nest inside it
        if jobs > 1 and len(p.pairs) > 1:
            with ThreadPoolExecutor(max_workers=jobs) as ex:
                rows = list(ex.map(one, p.pairs))
        else:
            rows = [one(x) for x in p.pairs]
    outs: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        outs.setdefault(r["output"], []).append(r)
    summary = []
    for o, rs in outs.items():
        worst = M.summarize(rs)
        nf = sum(1 for r in rs if r["status"] != "PASS")
        srow: dict[str, Any] = {"output": o, "samples": len(rs), "failing_samples": nf,
                                "status": "FAIL" if nf else "PASS",
                                "nan_baseline": sum(r.get("nan_baseline", 0) for r in rs),
                                "inf_baseline": sum(r.get("inf_baseline", 0) for r in rs),
                                "nan_candidate": sum(r.get("nan_candidate", 0) for r in rs),
                                "inf_candidate": sum(r.get("inf_candidate", 0) for r in rs)}
        srow.update(worst)
        if want_hist:
            h = None
            z = 0
            for r in rs:
                if "hist" in r:
                    c = np.asarray(r["hist"]["counts"])
                    h = c if h is None else h + c
                    z += r["hist"]["zero"]
            if h is not None:
                srow["hist"] = {"edges_log10": M.HIST_EDGES.tolist(), "counts": h.tolist(), "zero": z}
        summary.append(srow)
    for r in rows:
        r.pop("hist", None)
    verdict = "FAIL" if (p.missing or any(r["status"] != "PASS" for r in rows)) else "PASS"
    return Report(rows, summary, p.missing, p.extra, th, verdict)
