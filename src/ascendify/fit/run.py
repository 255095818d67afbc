"""``ascendify fit`` as a function: options in, one JSON-able result out (see docs/fit.md)."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence

from ascendify.errors import AscendifyError
from ascendify.fit import chip as chipmod
from ascendify.fit.engine import AMP_DTYPES, OPTIMIZERS, FitSession, Measurement, StepOptions, _inclusive
from ascendify.fit.levers import SHARDS, Shard, plan_rows
from ascendify.fit.recorder import CATEGORIES

TIMELINE_POINTS = 240


def parse_inputs(inputs: Sequence[str]):
    """``--input`` values → InputSpec list (probe's parser); :class:`AscendifyError` on bad ones."""
    from ascendify.probe.spec import SpecError, parse_spec
    if not inputs:
        raise AscendifyError("--input is required, e.g. --input x:8,3,224,224:float32 (axis 0 is the batch)")
    try:
        specs = [parse_spec(s) for s in inputs]
    except SpecError as exc:
        raise AscendifyError(str(exc)) from None
    if len({s.name for s in specs}) != len(specs):
        raise AscendifyError("--input names must be distinct")
    return specs


def top_modules(m: Measurement, n: int = 10) -> List[dict]:
    """Module groups by the activation bytes saved inside them (inclusive): indices folded to
    ``*`` (``blocks.*`` = every block), one group per pattern and module class.  A group is
    dropped when a child group (one name part deeper) holds 95% of its bytes — the child says
    it more precisely.  Sorted by bytes, largest first; each ``{"module", "type", "count",
    "activation_bytes", "self_bytes"}``."""
    incl = _inclusive(m.modules)
    groups: Dict[tuple, dict] = {}
    for name, b in incl.items():
        if not name or b <= 0:
            continue
        pattern = ".".join("*" if p.isdigit() else p for p in name.split("."))
        kind = m.module_types.get(name, "")
        g = groups.setdefault((pattern, kind), {"module": pattern, "type": kind, "count": 0,
                                                "activation_bytes": 0, "self_bytes": 0})
        g["count"] += 1
        g["activation_bytes"] += b
        g["self_bytes"] += m.modules.get(name, 0)
    keep = []
    for (pattern, _), g in groups.items():
        kids = [c for (k, _), c in groups.items() if k.startswith(pattern + ".") and "." not in k[len(pattern) + 1:]]
        if any(c["activation_bytes"] >= 0.95 * g["activation_bytes"] for c in kids):
            continue
        keep.append(g)
    keep.sort(key=lambda g: (-g["activation_bytes"], g["module"], g["type"]))
    return keep[:n]


def timeline(m: Measurement, points: int = TIMELINE_POINTS) -> List[dict]:
    """The live-bytes curve cut into at most ``points`` buckets; each bucket reports the event
    with the most live bytes in it: ``{"event", "phase", "bytes", <category>: bytes...}``."""
    n = len(m.timeline)
    if n == 0:
        return []
    phases = sorted(m.phase_starts.items(), key=lambda kv: kv[1])

    def phase_at(i: int) -> str:
        cur = phases[0][0] if phases else ""
        for name, start in phases:
            if start <= i:
                cur = name
        return cur

    size = max(1, -(-n // points))
    out = []
    for s in range(0, n, size):
        seg = range(s, min(n, s + size))
        i = max(seg, key=lambda k: m.timeline[k])
        pt = {"event": i, "phase": phase_at(i), "bytes": m.timeline[i]}
        for c in CATEGORIES:
            pt[c] = m.category_timeline[c][i]
        out.append(pt)
    return out


def _public(r: dict) -> dict:
    return {k: v for k, v in r.items() if not k.startswith("_")}


def fit(target, inputs: Sequence[str], *, chip: Optional[str] = None, optimizer: str = "adam",
        amp: Optional[str] = None, checkpointing: Optional[str] = None, cards: int = 1,
        shard: Optional[str] = None, batch_auto: bool = False, foreach: bool = True,
        suggest: bool = True, alloc_conf: Optional[str] = None, runtime_reserve: Optional[int] = None,
        loss: Optional[str] = None) -> dict:
    """Predict the memory of one training step of ``target`` on ``inputs`` and check ``chip``.

    Returns the result documented in docs/fit.md (``peak_bytes``, ``reserved_bytes``,
    ``split``, ``totals``, ``top_modules``, ``timeline``, ``chip``, ``fits``, ``margin_bytes``,
    ``rows``...).  Each input is passed to ``forward`` as the parameter of its name
    (``input_map``); ``loss`` (``pkg.module:function`` or ``file.py:function``) is called as
    ``function(output, inputs_by_name)`` for the loss, else the mean of the float outputs is
    trained on.  ``warnings``: optional forward parameters left at their defaults while the output
    holds no scalar loss (the measured call may do less than a training step).
    Raises :class:`AscendifyError` (one line) for bad options, inputs or
    factories and for a step that fails on fake tensors.
    """
    specs = parse_inputs(inputs)
    if optimizer not in OPTIMIZERS:
        raise AscendifyError(f"--optimizer '{optimizer}': expected one of {', '.join(OPTIMIZERS)}")
    if amp is not None and amp not in AMP_DTYPES:
        raise AscendifyError(f"--amp '{amp}': expected fp16 or bf16")
    if shard is not None and shard not in SHARDS:
        raise AscendifyError(f"--shard '{shard}': expected one of {', '.join(SHARDS)}")
    if cards < 1:
        raise AscendifyError(f"--cards {cards}: must be 1 or more")
    if shard and cards == 1:
        raise AscendifyError(f"--shard {shard} needs --cards N with N > 1")
    soc = None
    if chip:
        soc = chipmod.normalize(chip)
        if soc is None:
            raise AscendifyError(f"--chip '{chip}': unknown soc_version; use one listed in docs/chips.md, e.g. Ascend910B3, "
                                 "Ascend310P3 (npu-smi info, Name column, prefixed with 'Ascend')")
    if batch_auto and not soc:
        raise AscendifyError("--batch auto needs --chip SOC (the HBM to fit into)")
    for s in specs:
        if not s.shape:
            raise AscendifyError(f"--input '{s.text()}': needs a batch axis (axis 0)")
    chipmod.set_runtime_reserve(runtime_reserve)
    loss_fn = None
    if loss:
        from ascendify.probe.model import load_factory

        loss_fn = load_factory(loss)
    session = FitSession(target, specs, optimizer=optimizer, foreach=foreach, alloc_conf=alloc_conf, loss_fn=loss_fn)
    opts = StepOptions(optimizer=optimizer, amp=amp, checkpointing=checkpointing, foreach=foreach)
    configured, rows = plan_rows(session, opts, Shard(shard, cards) if shard else Shard(), soc,
                                 batch_auto=batch_auto, suggest=suggest)
    m: Measurement = configured["_m"]
    warns = []
    if session.args.defaulted and loss_fn is None and session.scalar_loss is False:
        left = session.args.defaulted
        shown = ", ".join(left[:4]) + (f" and {len(left) - 4} more" if len(left) > 4 else "")
        warns.append(f"{session.args.signature}: {shown} left at {'its default' if len(left) == 1 else 'their defaults'} and the "
                     "output holds no scalar loss, so fit measured that call and trained on the mean of its outputs; a model "
                     "that computes less without them (nanoGPT: only the last position's logits without targets) is then "
                     f"predicted too small. Give them with --input {left[0]}:SHAPE[:DTYPE], or the loss with "
                     "--loss pkg.module:function")
    v = chipmod.verdict(soc, configured["reserved_bytes"])
    split = dict(m.split)
    if configured["shard"]:
        f = Shard(shard, cards).factors()
        split = {c: int(b * f.get(c, 1.0)) for c, b in split.items()}
    result = {
        "target": target if isinstance(target, str) else getattr(target, "__name__", "factory"),
        "built_on": session.built_on,
        "inputs": [s.text() for s in specs],
        "input_map": {n: (p if p is not None else "(positional)") for n, p in session.args.mapping.items()},
        "loss": loss, "warnings": warns, "batch": m.batch, "optimizer": optimizer, "foreach": foreach,
        "amp": amp, "checkpointing": checkpointing, "checkpointed_modules": m.checkpointed,
        "shard": shard, "cards": cards,
        "peak_bytes": configured["peak_bytes"], "peak_phase": m.peak_phase,
        "reserved_bytes": configured["reserved_bytes"],
        "allocator_model": "ascendify.fit.allocator" if chipmod.allocator_available() else None,
        "split": split, "totals": m.totals,
        "top_modules": top_modules(m), "timeline": timeline(m),
        "chip": soc, "hbm_bytes": v["hbm_bytes"], "hbm_source": v["hbm_source"],
        "runtime_reserve_bytes": v["runtime_reserve_bytes"], "runtime_reserve_source": v["runtime_reserve_source"],
        "alloc_conf": alloc_conf, "usable_bytes": v["usable_bytes"],
        "fits": v["fits"], "margin_bytes": v["margin_bytes"],
        "rows": [_public(r) for r in rows],
        "ops": m.ops, "seconds": round(sum(r["_m"].seconds for r in rows if "_m" in r), 3),
        "batch_capped": any(r.get("batch_capped") for r in rows),
        "notes": _notes(configured, soc) + _cap_note(rows) + _bf16_note(soc, rows) + ([
            "the factory reads tensor values while building, so it was built "
            + ("on the meta device" if session.built_on == "meta" else "for real on the CPU (parameters only)")
            + " and then made fake"] if session.built_on != "fake" else []),
    }
    return result


def _bf16_note(soc: Optional[str], rows: list) -> List[str]:
    """A bf16 row for a chip without bf16 (910A, 310P: chips KB, torch_npu's IsBF16Supported)
    predicts memory that chip cannot use: say so."""
    from ascendify.kb.chips import chip_info

    info = chip_info(soc) if soc else None
    if info is None or info.bf16 is not False:
        return []
    bf16 = [r["lever"] for r in rows if r.get("amp") == "bf16" or "bf16" in str(r.get("lever", "")) + str(r.get("how", ""))]
    if not bf16:
        return []
    return [f"{soc} has no bf16 ({info.family_name}; chips KB: torch_npu IsBF16Supported is SocVersion >= Ascend910B1): "
            f"the {', '.join(sorted(set(bf16)))} row(s) show memory only — on this chip use --amp fp16"]


def _cap_note(rows: list) -> List[str]:
    """``--batch auto`` stopped at the search cap with memory to spare: the batch is a floor."""
    from ascendify.fit.levers import MAX_BATCH
    from ascendify.fit.render import human

    return [f"--batch auto stopped at its search cap ({MAX_BATCH}): batch {r['batch']} still fits with "
            f"{human(r['margin_bytes'])} to spare, so the largest batch that fits is larger (batch_capped)"
            for r in rows if r.get("batch_capped")]


def _notes(configured: dict, soc: Optional[str]) -> List[str]:
    notes = ["sizes are tensor storage bytes from one steady-state step on fake tensors (no memory used); "
             "peak_bytes is before the caching allocator, reserved_bytes after it"]
    if not chipmod.allocator_available():
        notes.append("no caching-allocator model installed: reserved_bytes = peak_bytes (no block rounding)")
    if configured.get("shard"):
        notes.append(f"{configured['shard']} x{configured['cards']} is computed from the measured split, not re-run; "
                     "HCCL's buffers for one communicator are added to reserved_bytes; framework communication buckets "
                     "(DeepSpeed reduce/allgather buckets, FSDP prefetch) are not counted")
    if soc and chipmod.hbm_bytes(soc) is None:
        notes.append(f"the HBM size of {soc} is unknown, so there is no fits verdict")
    if not soc:
        notes.append("no --chip: no fits verdict")
    return notes


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)
