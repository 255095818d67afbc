"""Adapter to the chip HBM table (``ascendify.kb.chips.hbm_bytes``/``hbm_source``) and the
caching-allocator model (``ascendify.fit.allocator``: ``reserved_for``, ``RUNTIME_RESERVE_BYTES``).

Both are written separately; until they exist this module answers ``None`` for the HBM of a
chip (so no fits verdict is given), treats reserved bytes as the framework's peak (no
rounding) and a runtime reserve of 0 — and says so in the report (``allocator_model`` /
``hbm_source``).  Tests patch :func:`hbm_bytes`, :func:`reserved_for` and
:func:`runtime_reserve` here.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple


def hbm_bytes(soc: str) -> Optional[int]:
    """HBM bytes one device of ``soc`` has, or None if unknown (or no chip table yet)."""
    try:
        from ascendify.kb import chips
        fn = getattr(chips, "hbm_bytes")
    except (ImportError, AttributeError):
        return None
    return fn(soc)


def hbm_source(soc: str) -> Optional[str]:
    try:
        from ascendify.kb import chips
        fn = getattr(chips, "hbm_source")
    except (ImportError, AttributeError):
        return None
    return fn(soc)


def normalize(soc: str) -> Optional[str]:
    from ascendify.kb.chips import normalize_soc_version
    return normalize_soc_version(soc)


def allocator_available() -> bool:
    try:
        from ascendify.fit import allocator  # noqa: F401
    except ImportError:
        return False
    return hasattr(allocator, "reserved_for")


def reserved_for(events: Sequence[tuple], peak_bytes: int, alloc_conf: Optional[str] = None,
                 soc: Optional[str] = None) -> int:
    """Bytes the caching allocator holds at its high-water mark when it serves ``events``
    (``("alloc", id, nbytes)`` / ``("free", id)`` in order), with ``alloc_conf`` as
    ``PYTORCH_NPU_ALLOC_CONF`` would set it.  Without the allocator model: ``peak_bytes``.
    Raises :class:`AscendifyError` for a bad ``alloc_conf``."""
    try:
        from ascendify.fit import allocator
    except ImportError:
        return peak_bytes
    fn = getattr(allocator, "reserved_for", None)
    if fn is None:
        return peak_bytes
    settings = None
    if hasattr(allocator, "Settings"):
        base = allocator.Settings.for_chip(soc) if hasattr(allocator.Settings, "for_chip") else allocator.Settings()
        settings = allocator.Settings.from_conf(alloc_conf, base) if alloc_conf else base
    return int(fn(events, settings)) if settings is not None else int(fn(events))


_RESERVE_OVERRIDE: list = []


def runtime_reserve() -> int:
    """Bytes the runtime keeps outside the caching allocator (context, workspace), per device:
    ``--runtime-reserve`` if given, else ``allocator.RUNTIME_RESERVE_BYTES``, else 0."""
    if _RESERVE_OVERRIDE:
        return _RESERVE_OVERRIDE[-1]
    try:
        from ascendify.fit import allocator
    except ImportError:
        return 0
    return int(getattr(allocator, "RUNTIME_RESERVE_BYTES", 0))


def runtime_reserve_source() -> Optional[str]:
    if _RESERVE_OVERRIDE:
        return "--runtime-reserve"
    try:
        from ascendify.fit import allocator
    except ImportError:
        return None
    return getattr(allocator, "RUNTIME_RESERVE_SOURCE", None)


def set_runtime_reserve(nbytes: Optional[int]) -> None:
    """Override the runtime reserve (``None``: back to the default)."""
    _RESERVE_OVERRIDE.clear()
    if nbytes is not None:
        _RESERVE_OVERRIDE.append(int(nbytes))


def hccl_bytes(cards: int) -> int:
    """Device bytes HCCL keeps outside the caching allocator for a data-parallel job on
    ``cards`` devices: one communicator (``allocator.hccl_buffer_bytes(1)``); 0 for one card
    or without the allocator model."""
    if cards <= 1:
        return 0
    try:
        from ascendify.fit import allocator
    except ImportError:
        return 0
    fn = getattr(allocator, "hccl_buffer_bytes", None)
    return int(fn(1)) if fn else 0


def verdict(soc: Optional[str], reserved: int) -> dict:
    """``{"chip", "hbm_bytes", "hbm_source", "usable_bytes", "fits", "margin_bytes"}`` for a step
    that needs ``reserved`` allocator bytes on ``soc``; ``fits``/``margin_bytes`` are None when
    the chip's HBM is unknown."""
    out = {"chip": soc, "hbm_bytes": None, "hbm_source": None, "runtime_reserve_bytes": runtime_reserve(),
           "runtime_reserve_source": runtime_reserve_source(),
           "usable_bytes": None, "fits": None, "margin_bytes": None}
    if not soc:
        return out
    hbm = hbm_bytes(soc)
    if hbm is None:
        return out
    usable = hbm - out["runtime_reserve_bytes"]
    out.update(hbm_bytes=int(hbm), hbm_source=hbm_source(soc) or None, usable_bytes=usable,
               fits=reserved <= usable, margin_bytes=usable - reserved)
    return out
