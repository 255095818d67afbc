"""Parse torch_npu's ``NPU out of memory`` message and tell which kind of shortage it is.

Message format (torch_npu ``NPUCachingAllocator.cpp``, quoted in the project's
research notes ``accuracy-profiling-atc.md`` §5.4)::

    NPU out of memory. Tried to allocate 260.00 MiB (NPU 0; 28.50 GiB total capacity;
    10.24 GiB already allocated; 10.24 GiB current active; 149.57 MiB free;
    10.28 GiB reserved in total by PyTorch) If reserved memory is >> allocated ...

Each field is looked up on its own, so older or newer releases that add
("allowed") or drop ("current active") a field still parse.
"""

from __future__ import annotations

import re
from typing import Optional

_SIZE = r"(\d+(?:\.\d+)?) ?([KMGTP]i?B|bytes|B)\b"
_FIELDS = {
    "requested": re.compile(r"Tried to allocate " + _SIZE),
    "total": re.compile(_SIZE + r" total capacity"),
    "allocated": re.compile(_SIZE + r" already allocated"),
    "active": re.compile(_SIZE + r" current active"),
    "free": re.compile(_SIZE + r" free\b"),
    "allowed": re.compile(_SIZE + r" allowed"),
    "reserved": re.compile(_SIZE + r" reserved in total by PyTorch"),
}
_DEVICE = re.compile(r"\(NPU (\d+);")
_UNIT = {"B": 1 / 2**20, "bytes": 1 / 2**20, "KB": 1 / 1024, "KiB": 1 / 1024, "MB": 1.0, "MiB": 1.0,
         "GB": 1024.0, "GiB": 1024.0, "TB": 2**20, "TiB": 2**20, "PB": 2**30, "PiB": 2**30}

FRAGMENTATION = "fragmentation"
OTHER_PROCESS = "memory held outside PyTorch"
SHORTAGE = "real shortage"


def to_mib(value: str, unit: str) -> float:
    """``("1.5", "GiB")`` → 1536.0 (MiB)."""
    return float(value) * _UNIT[unit]


def fmt(mib: float) -> str:
    """MiB → the allocator's own style: ``260.00 MiB`` / ``28.50 GiB``."""
    if abs(mib) >= 1024:
        return f"{mib / 1024:.2f} GiB"
    return f"{mib:.2f} MiB"


def parse(line: str) -> Optional[dict]:
    """Numbers of one OOM message in MiB (keys: requested, total, allocated,
    active, free, allowed, reserved — those present) plus ``device``; None if
    the line has no ``Tried to allocate`` figure."""
    out: dict = {}
    for k, rx in _FIELDS.items():
        m = rx.search(line)
        if m:
            out[k] = to_mib(m.group(1), m.group(2))
    if "requested" not in out:
        return None
    m = _DEVICE.search(line)
    if m:
        out["device"] = int(m.group(1))
    return out


def judge(n: dict) -> dict:
    """Classify an OOM from its numbers (MiB).

    * reserved − allocated ≥ requested: the caching allocator already holds
      enough unused memory, but no single block is big enough → fragmentation;
    * else total − reserved − free ≥ max(requested, 10 % of total): that much
      device memory is held outside this process's PyTorch allocator (another
      process on the NPU, a leftover job, HCCL buffers, CANN workspaces);
    * else the model needs more memory than the device has → real shortage.

    Returns ``{"verdict", "cached_unused", "outside", "explain": [lines]}``.
    The thresholds are this tool's heuristics, not documented NPU facts.
    """
    req = n["requested"]
    explain = []
    res: dict = {}
    cached = outside = None
    if "reserved" in n and "allocated" in n:
        cached = n["reserved"] - n["allocated"]
        res["cached_unused"] = round(cached, 2)
        cmp = "≥" if cached >= req else "<"
        explain.append(
            f"reserved − allocated = {fmt(n['reserved'])} − {fmt(n['allocated'])} = {fmt(cached)} "
            f"{cmp} requested {fmt(req)}"
        )
    if "total" in n and "reserved" in n and "free" in n:
        outside = n["total"] - n["reserved"] - n["free"]
        res["outside"] = round(outside, 2)
        explain.append(
            f"held outside PyTorch = total − reserved − free = {fmt(n['total'])} − {fmt(n['reserved'])} − "
            f"{fmt(n['free'])} = {fmt(outside)}"
            + (f" ({outside / n['total']:.0%} of the device)" if n["total"] else "")
        )
    if cached is not None and cached >= req:
        verdict = FRAGMENTATION
        advice = ("The allocator holds enough unused memory but in pieces too small for this request: set "
                  "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True (or max_split_size_mb:<n>, which cannot be "
                  "combined with expandable segments); avoid torch.npu.empty_cache() in the loop.")
    elif outside is not None and outside >= max(req, 0.10 * n.get("total", 0.0)):
        verdict = OTHER_PROCESS
        advice = (f"{fmt(outside)} of the NPU is used outside this process's caching allocator: another process "
                  "on the same NPU (`npu-smi info`), a leftover job, two ranks mapped to one device "
                  "(ASCEND_RT_VISIBLE_DEVICES / local rank), or large HCCL buffers (HCCL_BUFFSIZE).")
    else:
        verdict = SHORTAGE
        advice = ("The model really needs more memory than the device has: smaller batch or sequence length, "
                  "activation checkpointing, mixed precision, or shard the model over more NPUs.")
    res.update(verdict=verdict, advice=advice, explain=explain)
    return res
