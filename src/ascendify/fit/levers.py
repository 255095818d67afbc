"""The levers against out-of-memory, each as its own measured row.

- ``amp``: the step re-run under ``torch.autocast`` (fp16 or bf16).
- ``checkpointing``: the step re-run with the named modules' forward wrapped in
  ``torch.utils.checkpoint.checkpoint``.
- ``shard``: ZeRO / FSDP across N cards, *computed from the measured split* (not re-run):
  zero1 divides optimizer states by N, zero2 also gradients, zero3 / fsdp also parameters;
  zero3 / fsdp add back one block's full parameters (the all-gathered block being computed).
  The new peak is the maximum over the whole measured timeline of the re-weighted categories;
  its reserved bytes add the allocator overhead measured unsharded and HCCL's buffers for one
  communicator (``ascendify.fit.allocator.hccl_buffer_bytes``).
- ``batch auto``: the largest batch that fits, found by binary search on fake runs at the
  candidate sizes (activations re-measured at every size, not extrapolated).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, List, Optional

from ascendify.errors import AscendifyError
from ascendify.fit import chip as chipmod
from ascendify.fit.engine import FitSession, Measurement, StepOptions, auto_blocks

SHARDS = ("zero1", "zero2", "zero3", "fsdp")
MAX_BATCH = 1 << 16


@dataclass(frozen=True)
class Shard:
    """``kind`` in :data:`SHARDS`, ``cards`` >= 1."""

    kind: Optional[str] = None
    cards: int = 1

    def factors(self) -> Dict[str, float]:
        n = max(1, self.cards) if self.kind else 1
        f = {"optimizer_states": 1.0, "gradients": 1.0, "parameters": 1.0}
        if self.kind:
            f["optimizer_states"] = 1.0 / n
            if self.kind in ("zero2", "zero3", "fsdp"):
                f["gradients"] = 1.0 / n
            if self.kind in ("zero3", "fsdp"):
                f["parameters"] = 1.0 / n
        return f

    def label(self) -> str:
        return f"{self.kind} x{self.cards}" if self.kind else ""


def sharded_peak(m: Measurement, shard: Shard, gather_bytes: int = 0) -> int:
    """Peak live bytes of ``m`` with the categories ``shard`` divides scaled by 1/N (plus the
    all-gather buffer of one block for zero3/fsdp), over the whole timeline."""
    if not shard.kind or shard.cards <= 1:
        return m.peak_bytes
    f = shard.factors()
    tl = m.category_timeline
    best = 0
    n = len(m.timeline)
    for i in range(n):
        v = 0.0
        for c, series in tl.items():
            v += series[i] * f.get(c, 1.0)
        if v > best:
            best = v
    extra = gather_bytes if shard.kind in ("zero3", "fsdp") else 0
    return int(best) + extra


def block_param_bytes(session: FitSession) -> int:
    """Parameter bytes of the largest repeated block (what zero3/fsdp gathers at once)."""
    model = session.model
    mods = dict(model.named_modules())
    names = auto_blocks(model, session._baseline_modules or {}) or [n for n, _ in model.named_children()]
    best = 0
    for n in names:
        b = sum(p.numel() * p.element_size() for p in mods[n].parameters())
        best = max(best, b)
    return best


def row(session: FitSession, lever: str, opts: StepOptions, shard: Shard, soc: Optional[str],
        batch: Optional[int] = None, measured: Optional[Measurement] = None) -> dict:
    """One table row: measure (or reuse ``measured``), apply ``shard``, check against ``soc``."""
    m = measured if measured is not None else session.measure(opts, batch)
    raw_reserved = chipmod.reserved_for(m.events, m.peak_bytes, session.alloc_conf, soc)
    peak = m.peak_bytes
    reserved = raw_reserved
    how = "measured"
    if shard.kind and shard.cards > 1:
        peak = sharded_peak(m, shard, block_param_bytes(session))
        reserved = peak + (raw_reserved - m.peak_bytes)  # the allocator's overhead as measured unsharded
        how = "computed from the measured split"
        reserved += chipmod.hccl_bytes(shard.cards)  # HCCL's buffers for the data-parallel communicator
    v = chipmod.verdict(soc, reserved)
    return {"lever": lever, "batch": m.batch, "amp": opts.amp, "checkpointing": opts.checkpointing,
            "checkpointed_modules": len(m.checkpointed), "shard": shard.kind, "cards": shard.cards if shard.kind else 1,
            "peak_bytes": int(peak), "reserved_bytes": int(reserved), "fits": v["fits"], "margin_bytes": v["margin_bytes"],
            "how": how, "_m": m}


def find_batch(session: FitSession, opts: StepOptions, shard: Shard, soc: str, start: int) -> dict:
    """Largest batch whose row fits ``soc``: doubling from ``start`` until it does not fit,
    then bisection; every candidate is a fake run.  Returns the row of that batch with
    ``next_batch``/``next_peak_bytes``/``next_reserved_bytes`` (the first size that does not
    fit), ``tried`` (the candidate sizes, in order) and ``batch_capped``: true when the
    search stopped at :data:`MAX_BATCH` with that batch still fitting (no ``next_batch``;
    the largest batch that fits is larger).

    Raises :class:`AscendifyError` when the chip's HBM is unknown, or nothing fits at batch 1.
    """
    if chipmod.hbm_bytes(soc) is None:
        raise AscendifyError(f"--batch auto: the HBM size of '{soc}' is unknown; give --chip with a soc_version the chip table has")
    tried: List[int] = []
    cache: Dict[int, dict] = {}

    def at(b: int) -> dict:
        if b not in cache:
            tried.append(b)
            cache[b] = row(session, "batch auto", opts, shard, soc, batch=b)
        return cache[b]

    b = max(1, start)
    if at(b)["fits"]:
        lo, hi = b, None
        while hi is None:
            nb = lo * 2
            if nb > MAX_BATCH:
                if lo >= MAX_BATCH:
                    break  # capped: batch_capped
                nb = MAX_BATCH  # the cap itself, then bisection below it
            if at(nb)["fits"]:
                lo = nb
            else:
                hi = nb
    else:
        hi, lo = b, None
        while lo is None:
            nb = hi // 2
            if nb < 1:
                raise AscendifyError(f"--batch auto: the step does not fit {soc} even at batch 1 "
                                     f"(needs {at(1)['reserved_bytes']} bytes); try --amp, --checkpointing or --shard")
            if at(nb)["fits"]:
                lo = nb
            else:
                hi = nb
    if hi is not None:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if at(mid)["fits"]:
                lo = mid
            else:
                hi = mid
    best = dict(at(lo))
    best["tried"] = list(tried)
    best["batch_capped"] = hi is None
    if hi is not None:
        nxt = at(hi)
        best.update(next_batch=hi, next_peak_bytes=nxt["peak_bytes"], next_reserved_bytes=nxt["reserved_bytes"])
    else:
        best.update(next_batch=None, next_peak_bytes=None, next_reserved_bytes=None)
    return best


def plan_rows(session: FitSession, opts: StepOptions, shard: Shard, soc: Optional[str], *, batch_auto: bool = False,
              suggest: bool = True) -> "tuple[dict, list]":
    """The configured row (every option the user gave) and the table of rows.

    Rows: ``baseline`` (fp32, no checkpointing, one card); each lever given alone; the
    combination when more than one was given; ``batch auto`` for the configuration.  When no
    lever was given, ``suggest`` is true and the baseline does not fit (or no chip was given),
    ``amp bf16`` and ``checkpointing auto`` rows are added as what to try.
    """
    base_opts = replace(opts, amp=None, checkpointing=None)
    base = row(session, "baseline", base_opts, Shard(), soc)
    rows = [base]
    singles = []
    if opts.amp:
        singles.append((f"amp {opts.amp}", replace(base_opts, amp=opts.amp), Shard()))
    if opts.checkpointing:
        singles.append((f"checkpointing {opts.checkpointing}", replace(base_opts, checkpointing=opts.checkpointing), Shard()))
    if shard.kind and shard.cards > 1:
        singles.append((f"{shard.kind} x{shard.cards}", base_opts, shard))
    for lever, o, sh in singles:
        reuse = base["_m"] if (o == base_opts) else None
        rows.append(row(session, lever, o, sh, soc, measured=reuse))
    configured = rows[-1] if singles else base
    if len(singles) > 1:
        lever = " + ".join(s[0] for s in singles)
        configured = row(session, lever, opts, shard, soc)
        rows.append(configured)
    if not singles and suggest and base["fits"] is not True:
        for lever, o in (("amp bf16 (suggested)", replace(base_opts, amp="bf16")),
                         ("checkpointing auto (suggested)", replace(base_opts, checkpointing="auto"))):
            try:
                rows.append(row(session, lever, o, Shard(), soc))
            except AscendifyError:
                continue
    if batch_auto:
        rows.append(find_batch(session, opts, shard, soc, configured["batch"] or 1))
    base_peak = base["peak_bytes"]
    for r in rows:
        r["delta_bytes"] = r["peak_bytes"] - base_peak
    return configured, rows
