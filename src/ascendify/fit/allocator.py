"""A replay model of torch_npu's caching allocator (``NPUCachingAllocator``).

Given the ordered tensor-storage allocations and frees of one training step
(what ``ascendify fit`` records under fake tensors), :func:`reserved_for` replays
them through a model of the allocator and returns the peak of *reserved* bytes —
what the allocator holds from the device (``torch.npu.max_memory_reserved()``),
as opposed to the bytes the framework asked for.

Source (read, not copied): Ascend/pytorch ``torch_npu/csrc/core/npu/NPUCachingAllocator.cpp``,
``NPUCachingAllocator.h`` and ``NPUAllocatorConfig.h`` @ 9e73e708ab9350d203475609f36f8a43f6a0c2ab
(https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/csrc/core/npu/NPUCachingAllocator.cpp),
and the option list in ``docs/zh/api/environment_variable/memory_management/PYTORCH_NPU_ALLOC_CONF.md``
at the same commit.  What the model takes from there:

- ``round_size``: **32 bytes of padding are added to every request first**
  (``AddPadSize()``; 0 only on Ascend 950 with CANN >= 9.1.0), then the size is
  rounded up to a multiple of 512 bytes (``kMinBlockSize``), or to the next
  power-of-two division when ``roundup_power2_divisions`` is set.  So a 512-byte
  tensor takes 1024 bytes, and a tensor of exactly 1 MiB goes to the large pool.
- Pools: rounded size <= 1 MiB (``kSmallSize``) → small pool, else large pool.
- New segment (``get_allocation_size``): small → 2 MiB (``kSmallBuffer``);
  large < 10 MiB (``kMinLargeAlloc``) → ``large_segment_size`` (20 MiB,
  ``large_segment_size_mb``); larger → rounded up to 2 MiB (``kRoundLarge``);
  with ``page_size:1g`` the large pool rounds segments up to 1 GiB.
- Reuse (``get_free_block``): best fit — the smallest cached free block of the
  same pool with size >= the request, ties by address; with ``max_split_size_mb``
  an oversized block (>= max_split) is not given to a smaller request, and a
  request >= max_split takes a block only if it wastes < ``max_non_split_rounding_mb``
  (default 20 MiB).
- Split (``should_split``): small pool (or expandable segments) when the
  remainder >= 512 bytes; large pool when size < max_split and the remainder
  > 1 MiB.  Freed blocks merge with free neighbours of the same segment.
- ``expandable_segments:True``: one growing segment per pool, mapped in pages
  of 2 MiB (small pool) or the large-pool page (``large_segment_size_mb``, else
  the deprecated ``segment_size_mb``, which acts only here; 20 MiB default); a request that no free block
  fits maps just enough pages at the segment end, merging with a free tail
  block; best fit prefers a non-tail block over the growable tail block.
- Not modelled: release of cached blocks back to the device (on OOM, on
  ``empty_cache()``, or by ``garbage_collection_threshold``, which acts only
  together with ``set_per_process_memory_fraction``) — so the result is the
  reserve of a run that never hits the device limit; multiple streams /
  ``record_stream``; graph private pools; ``base_addr_aligned_kb`` (alignment
  inside an expandable segment, at most 16 KiB per large block).

Units: bytes everywhere.  Only the standard library is used.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from ascendify.errors import AscendifyError

MiB = 1 << 20
GiB = 1 << 30

#: All sizes are rounded up to a multiple of this (``kMinBlockSize``).
MIN_BLOCK_SIZE = 512
#: Largest "small" allocation (``kSmallSize``), after padding and rounding.
SMALL_SIZE = 1 * MiB
#: Segment size of the small pool (``kSmallBuffer``).
SMALL_BUFFER = 2 * MiB
#: Default segment size for large allocations below :data:`MIN_LARGE_ALLOC` (``kLargeBuffer``).
LARGE_BUFFER = 20 * MiB
#: Large allocations below this share a :data:`LARGE_BUFFER` segment (``kMinLargeAlloc``).
MIN_LARGE_ALLOC = 10 * MiB
#: Larger allocations get their own segment rounded up to this (``kRoundLarge``).
ROUND_LARGE = 2 * MiB
#: ``page_size:1g`` segment granularity of the large pool (``kExtraLargeBuffer``).
EXTRA_LARGE_BUFFER = 1 * GiB
#: Padding ``AddPadSize()`` adds to every request before rounding.
PAD_BYTES = 32
#: Default of ``max_non_split_rounding_mb`` (PyTorch ``AcceleratorAllocatorConfig``: kLargeBuffer).
MAX_NON_SPLIT_ROUNDING = 20 * MiB

#: Bytes of HBM per device that are in use before torch_npu allocates anything
#: (device firmware/OS, driver, CANN runtime context).  **Unverified default**:
#: no Huawei document states it; the value is the idle ``HBM-Usage`` that public
#: ``npu-smi info`` outputs show on Atlas A2 (910B2, no process running):
#: 3197–3385 MiB of 65536 (https://github.com/vllm-project/vllm-ascend/issues/975,
#: https://github.com/vllm-project/vllm-ascend/issues/4284), rounded up to 3.5 GiB.
#: The process's own runtime context (kernels, workspace) is not in that figure
#: and not publicly documented; the 3.5 GiB keeps ~0.2 GiB for it, also unverified.
#: HCCL communication buffers come on top (see :func:`hccl_buffer_bytes`).
#: Override it per run (``fit --runtime-reserve``) when you have measured your machine.
RUNTIME_RESERVE_BYTES = 3584 * MiB
RUNTIME_RESERVE_VERIFIED = False
RUNTIME_RESERVE_SOURCE = (
    "unverified: idle npu-smi HBM-Usage on 910B2 (3197-3385 MiB) in "
    "https://github.com/vllm-project/vllm-ascend/issues/975 and "
    "https://github.com/vllm-project/vllm-ascend/issues/4284, rounded up to 3.5 GiB"
)

#: ``HCCL_BUFFSIZE`` default: 200 MB (treated as MiB).  HCCL allocates it outside the
#: caching allocator, exclusively, and **each communicator (process group) takes
#: 2 x HCCL_BUFFSIZE** (send + receive).  Source: CANN environment-variable reference,
#: HCCL_BUFFSIZE (https://www.hiascend.com/document/detail/en/CANNCommunityEdition/900/maintenref/envvar/envref_07_0080.html).
HCCL_BUFFSIZE_DEFAULT = 200 * MiB
HCCL_BUFFSIZE_SOURCE = (
    "https://www.hiascend.com/document/detail/en/CANNCommunityEdition/900/maintenref/envvar/envref_07_0080.html"
)


def hccl_buffer_bytes(communicators: int = 1, buffsize_mb: Optional[int] = None) -> int:
    """Device bytes HCCL keeps for ``communicators`` process groups: ``2 * HCCL_BUFFSIZE``
    each (``buffsize_mb`` in MB, default 200; see :data:`HCCL_BUFFSIZE_SOURCE`).
    0 for a single-device job (no communicator).

    >>> hccl_buffer_bytes(1) // MiB
    400
    """
    if communicators < 0:
        raise ValueError("communicators must be >= 0")
    size = HCCL_BUFFSIZE_DEFAULT if buffsize_mb is None else int(buffsize_mb) * MiB
    return 2 * size * int(communicators)


@dataclass(frozen=True)
class Settings:
    """Allocator options, as ``PYTORCH_NPU_ALLOC_CONF`` sets them (defaults = torch_npu's).

    ``expandable_segments``: virtual-memory segments (default False).
    ``large_segment_size``: bytes; ``large_segment_size_mb`` (default 20 MiB): segment of
    1–10 MiB requests, and the large-pool page with expandable segments.
    ``segment_size``: bytes or None; deprecated ``segment_size_mb``: the large-pool page with
    expandable segments only, used when ``large_segment_size`` is left at 20 MiB.
    ``max_split_size``: bytes or None (unlimited, the default); ``max_split_size_mb``.
    ``max_non_split_rounding_size``: bytes; ``max_non_split_rounding_mb`` (default 20 MiB).
    ``roundup_power2_divisions``: 0/1 = plain 512-byte rounding (default), else the division count.
    ``garbage_collection_threshold``: accepted, not modelled (only releases memory).
    ``page_size_1g``: ``page_size:1g`` — large-pool segments in 1 GiB units.
    ``pad_bytes``: ``AddPadSize()``: 32, or 0 on Ascend 950 with CANN >= 9.1.0
    (use :meth:`for_chip`).
    """

    expandable_segments: bool = False
    large_segment_size: int = LARGE_BUFFER
    segment_size: Optional[int] = None
    max_split_size: Optional[int] = None
    max_non_split_rounding_size: int = MAX_NON_SPLIT_ROUNDING
    roundup_power2_divisions: int = 0
    garbage_collection_threshold: float = 0.0
    page_size_1g: bool = False
    pad_bytes: int = PAD_BYTES

    @classmethod
    def from_conf(cls, conf: Optional[str], base: Optional["Settings"] = None) -> "Settings":
        """Parse a ``PYTORCH_NPU_ALLOC_CONF`` string (``"expandable_segments:True,max_split_size_mb:128"``).

        Unknown keys and pinned-memory keys are ignored (they do not change
        device reserve); bad values raise :class:`AscendifyError` naming the option.
        """
        s = base or cls()
        if not conf:
            return s
        changes: Dict[str, object] = {}
        seg_mb: Optional[int] = None
        large_mb: Optional[int] = None
        for item in str(conf).split(","):
            item = item.strip()
            if not item:
                continue
            if ":" not in item:
                raise AscendifyError(f"PYTORCH_NPU_ALLOC_CONF: '{item}' is not key:value; write e.g. expandable_segments:True")
            key, val = (x.strip() for x in item.split(":", 1))
            try:
                if key == "expandable_segments":
                    changes["expandable_segments"] = _bool(val)
                elif key == "max_split_size_mb":
                    changes["max_split_size"] = int(val) * MiB
                elif key == "max_non_split_rounding_mb":
                    changes["max_non_split_rounding_size"] = int(val) * MiB
                elif key == "large_segment_size_mb":
                    large_mb = int(val)
                elif key == "segment_size_mb":
                    seg_mb = int(val)
                elif key == "roundup_power2_divisions":
                    if val.startswith("["):
                        raise AscendifyError(
                            "PYTORCH_NPU_ALLOC_CONF: roundup_power2_divisions as a [size:value,...] list is not "
                            "modelled by ascendify fit; give a single value such as roundup_power2_divisions:4")
                    changes["roundup_power2_divisions"] = int(val)
                elif key == "garbage_collection_threshold":
                    changes["garbage_collection_threshold"] = float(val)
                elif key == "page_size":
                    changes["page_size_1g"] = val.lower() in ("1g", "1gb")
            except ValueError:
                raise AscendifyError(f"PYTORCH_NPU_ALLOC_CONF: bad value '{val}' for {key}") from None
        # large_segment_size_mb wins over segment_size_mb (get_custom_expandable_segment_size)
        if large_mb is not None:
            changes["large_segment_size"] = large_mb * MiB
        if seg_mb is not None:
            changes["segment_size"] = seg_mb * MiB
        return replace(s, **changes)  # type: ignore[arg-type]

    @classmethod
    def for_chip(cls, soc: Optional[str] = None, cann_version: Optional[str] = None, **kwargs) -> "Settings":
        """Settings with the chip's padding: 0 on Ascend 950 with CANN >= 9.1.0, else 32 bytes.

        An unknown CANN version keeps the 32-byte padding (torch_npu pads unless
        both conditions hold).
        """
        pad = PAD_BYTES
        if soc and cann_version and str(soc).lower().replace("ascend", "").startswith("950"):
            if _version_tuple(cann_version) >= (9, 1, 0):
                pad = 0
        return cls(pad_bytes=pad, **kwargs)

    def expandable_page(self) -> int:
        """Large-pool mapping granularity with expandable segments (bytes)."""
        if self.large_segment_size != LARGE_BUFFER:
            return self.large_segment_size
        return self.segment_size or LARGE_BUFFER


def _bool(val: str) -> bool:
    v = val.strip().lower()
    if v in ("true", "1", "yes"):
        return True
    if v in ("false", "0", "no"):
        return False
    raise ValueError(val)


def _version_tuple(v: str) -> Tuple[int, ...]:
    out = []
    for part in str(v).replace("-", ".").split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


DEFAULT = Settings()


def _power2_floor(n: int) -> int:
    return 1 << (n.bit_length() - 1)


def round_size(nbytes: int, settings: Optional[Settings] = None) -> int:
    """Block size torch_npu uses for a request of ``nbytes`` (``round_size``).

    >>> round_size(1), round_size(480), round_size(481), round_size(512)
    (512, 512, 1024, 1024)

    (32 bytes of padding first, then up to a multiple of 512.)  0 → 0: torch_npu
    does not call the allocator for empty storages.
    """
    s = settings or DEFAULT
    n = int(nbytes)
    if n < 0:
        raise ValueError(f"negative allocation size {nbytes}")
    if n == 0:
        return 0
    n += s.pad_bytes
    if n < MIN_BLOCK_SIZE:
        return MIN_BLOCK_SIZE
    div = s.roundup_power2_divisions
    if div > 1 and n > MIN_BLOCK_SIZE * div:
        if n & (n - 1) == 0:
            return n
        floor = _power2_floor(n)
        step = floor >> (div.bit_length() - 1)
        if step == 0:
            return floor << 1
        low = n & ~(step - 1)
        return n if low == n else low + step
    return MIN_BLOCK_SIZE * ((n + MIN_BLOCK_SIZE - 1) // MIN_BLOCK_SIZE)


def is_small(rounded: int) -> bool:
    """True when a rounded size is served from the small pool (<= 1 MiB)."""
    return rounded <= SMALL_SIZE


def allocation_size(rounded: int, settings: Optional[Settings] = None) -> int:
    """Size of the new segment torch_npu requests from the device for a rounded
    block size when no cached block fits (``get_allocation_size``; non-expandable)."""
    s = settings or DEFAULT
    if rounded <= SMALL_SIZE:
        return SMALL_BUFFER
    if s.page_size_1g:
        return EXTRA_LARGE_BUFFER * ((rounded + EXTRA_LARGE_BUFFER - 1) // EXTRA_LARGE_BUFFER)
    if rounded < MIN_LARGE_ALLOC:
        return s.large_segment_size
    return ROUND_LARGE * ((rounded + ROUND_LARGE - 1) // ROUND_LARGE)


class _Block:
    __slots__ = ("seg", "addr", "size", "allocated", "prev", "next", "pool")

    def __init__(self, seg: int, addr: int, size: int, pool: "_Pool"):
        self.seg = seg
        self.addr = addr
        self.size = size
        self.allocated = False
        self.prev: Optional[_Block] = None
        self.next: Optional[_Block] = None
        self.pool = pool

    def key(self) -> Tuple[int, int, int]:
        return (self.size, self.seg, self.addr)


class _Pool:
    """Free blocks of one pool, sorted by (size, segment, address) for best fit."""

    def __init__(self, small: bool):
        self.small = small
        self.keys: List[Tuple[int, int, int]] = []
        self.blocks: Dict[Tuple[int, int, int], _Block] = {}
        # expandable segments: one segment per pool, grown at its end
        self.mapped = 0
        self.tail: Optional[_Block] = None  # last block of the expandable segment

    def insert(self, b: _Block) -> None:
        k = b.key()
        bisect.insort(self.keys, k)
        self.blocks[k] = b

    def remove(self, b: _Block) -> None:
        k = b.key()
        i = bisect.bisect_left(self.keys, k)
        if i < len(self.keys) and self.keys[i] == k:
            del self.keys[i]
            del self.blocks[k]

    def lower_bound(self, size: int) -> int:
        return bisect.bisect_left(self.keys, (size, -1, -1))


class AllocatorModel:
    """Incremental model: call :meth:`malloc` / :meth:`free`; read :attr:`reserved`,
    :attr:`allocated` (rounded block bytes in use), :attr:`requested` (bytes asked
    for) and their peaks.  One device, one stream, nothing released to the device.
    """

    def __init__(self, settings: Optional[Settings] = None, **kwargs):
        s = settings or DEFAULT
        if kwargs:
            s = replace(s, **kwargs)
        self.settings = s
        self._pools = (_Pool(True), _Pool(False))
        self._live: Dict[object, Tuple[_Block, int]] = {}
        self._nseg = 0
        self._seg_sizes: Dict[Tuple[bool, int], int] = {}
        self.reserved = 0
        self.allocated = 0
        self.requested = 0
        self.peak_reserved = 0
        self.peak_allocated = 0
        self.peak_requested = 0
        self.segments = 0

    # -- helpers ---------------------------------------------------------
    def _max_split(self) -> Optional[int]:
        return self.settings.max_split_size

    def _find_free(self, pool: _Pool, size: int) -> Optional[_Block]:
        i = pool.lower_bound(size)
        if i >= len(pool.keys):
            return None
        b = pool.blocks[pool.keys[i]]
        if self.settings.expandable_segments:
            # best fit counts the growable tail block as its expandable size
            def exp_size(x: _Block) -> float:
                return float("inf") if x is pool.tail else x.size
            j = i + 1
            while j < len(pool.keys) and exp_size(pool.blocks[pool.keys[j]]) < exp_size(b):
                b = pool.blocks[pool.keys[j]]
                j += 1
        ms = self._max_split()
        if ms is not None:
            if size < ms and b.size >= ms:
                return None
            if size >= ms and b.size >= size + self.settings.max_non_split_rounding_size:
                return None
        return b

    def _should_split(self, b: _Block, size: int) -> bool:
        remaining = b.size - size
        if b.pool.small or self.settings.expandable_segments:
            return remaining >= MIN_BLOCK_SIZE
        ms = self._max_split()
        return (ms is None or size < ms) and remaining > SMALL_SIZE

    def _new_segment(self, pool: _Pool, size: int) -> _Block:
        alloc = allocation_size(size, self.settings)
        self._reserve(alloc)
        self.segments += 1
        self._nseg += 1
        self._seg_sizes[(pool.small, self._nseg)] = alloc
        return _Block(self._nseg, 0, alloc, pool)

    def _reserve(self, nbytes: int) -> None:
        self.reserved += nbytes
        self.peak_reserved = max(self.peak_reserved, self.reserved)

    # -- public ----------------------------------------------------------
    def malloc(self, key: object, nbytes: int) -> int:
        """Allocate ``nbytes`` under ``key``; return the block size used (0 for 0 bytes)."""
        if key in self._live:
            raise ValueError(f"allocation id {key!r} is already live")
        size = round_size(nbytes, self.settings)
        if size == 0:
            self._live[key] = (None, 0)  # type: ignore[assignment]
            return 0
        pool = self._pools[0] if is_small(size) else self._pools[1]
        b = self._find_free(pool, size)
        if b is not None:
            pool.remove(b)
        else:
            if self.settings.expandable_segments:
                b = self._grow(pool, size)
            else:
                b = self._new_segment(pool, size)
        if self._should_split(b, size):
            rest = _Block(b.seg, b.addr + size, b.size - size, pool)
            rest.next = b.next
            if rest.next is not None:
                rest.next.prev = rest
            rest.prev = b
            b.next = rest
            b.size = size
            if pool.tail is b:
                pool.tail = rest
            pool.insert(rest)
        b.allocated = True
        self._live[key] = (b, int(nbytes))
        self.allocated += b.size
        self.requested += int(nbytes)
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        self.peak_requested = max(self.peak_requested, self.requested)
        return b.size

    def _grow(self, pool: _Pool, size: int) -> _Block:
        s = self.settings
        page = SMALL_BUFFER if pool.small else (EXTRA_LARGE_BUFFER if s.page_size_1g else s.expandable_page())
        tail = pool.tail
        have = tail.size if (tail is not None and not tail.allocated) else 0
        # a free tail can already be big enough when best fit refused it (max_split_size);
        # find_expandable_block then hands it out without mapping more
        need = max(0, size - have)
        grow = page * ((need + page - 1) // page)
        start = pool.mapped
        pool.mapped += grow
        self._seg_sizes[(pool.small, 0)] = pool.mapped
        self._reserve(grow)
        if tail is not None and not tail.allocated:
            pool.remove(tail)
            tail.size += grow
            return tail
        if tail is None:
            self.segments += 1
        b = _Block(0, start, grow, pool)
        b.prev = tail
        if tail is not None:
            tail.next = b
        pool.tail = b
        return b

    def free(self, key: object) -> None:
        """Return the block of ``key`` to its pool, merging with free neighbours."""
        try:
            b, nbytes = self._live.pop(key)
        except KeyError:
            raise ValueError(f"free of unknown allocation id {key!r}") from None
        if b is None:
            return
        pool = b.pool
        self.allocated -= b.size
        self.requested -= nbytes
        b.allocated = False
        for nb in (b.prev, b.next):
            if nb is not None and not nb.allocated:
                pool.remove(nb)
                if nb is b.prev:
                    b.addr = nb.addr
                    b.prev = nb.prev
                    if nb.prev is not None:
                        nb.prev.next = b
                else:
                    b.next = nb.next
                    if nb.next is not None:
                        nb.next.prev = b
                    if pool.tail is nb:
                        pool.tail = b
                b.size += nb.size
        pool.insert(b)

    def check(self) -> None:
        """Assert the model's invariants (for tests): the blocks of every segment tile
        it exactly, linked in address order, no two free neighbours unmerged, reserved =
        sum of segments, allocated = sum of live blocks."""
        by_seg: Dict[Tuple[bool, int], List[_Block]] = {}
        live = [b for b, _ in self._live.values() if b is not None]
        free = [b for pool in self._pools for b in pool.blocks.values()]
        assert all(b.allocated for b in live) and not any(b.allocated for b in free)
        for b in live + free:
            by_seg.setdefault((b.pool.small, b.seg), []).append(b)
        assert sorted(by_seg) == sorted(self._seg_sizes), "segment without blocks"
        for key, blocks in by_seg.items():
            blocks.sort(key=lambda x: x.addr)
            pos = 0
            for i, b in enumerate(blocks):
                assert b.addr == pos, f"gap/overlap in segment {key} at {pos}"
                assert b.prev is (blocks[i - 1] if i else None)
                assert b.next is (blocks[i + 1] if i + 1 < len(blocks) else None)
                if i and not b.allocated:
                    assert blocks[i - 1].allocated, "unmerged free neighbours"
                pos += b.size
            assert pos == self._seg_sizes[key], f"segment {key} not tiled"
        assert self.reserved == sum(self._seg_sizes.values())
        assert self.allocated == sum(b.size for b in live)

    @property
    def cached(self) -> int:
        """Reserved bytes not held by a live block (``memory_reserved - memory_allocated``)."""
        return self.reserved - self.allocated


@dataclass(frozen=True)
class ReplayResult:
    """Outcome of :func:`replay`.  All bytes.

    ``peak_reserved``: max of reserved over the replay (the fit number).
    ``peak_allocated``: max of rounded live block bytes.  ``peak_requested``: max
    of live requested bytes.  ``final_reserved`` / ``final_allocated``: at the end.
    ``segments``: segments created (expandable: one per pool used).
    ``reserved_at_peak_requested``: reserved bytes at the event where requested bytes peaked.
    """

    peak_reserved: int
    peak_allocated: int
    peak_requested: int
    final_reserved: int
    final_allocated: int
    segments: int
    reserved_at_peak_requested: int


Event = Sequence[object]


def replay(events: Iterable[Event], settings: Optional[Settings] = None, **kwargs) -> ReplayResult:
    """Replay ``("alloc", id, nbytes)`` / ``("free", id)`` events; return a :class:`ReplayResult`.

    ``kwargs`` override :class:`Settings` fields (``expandable_segments=True``).
    Raises ``ValueError`` for an unknown event kind, a double alloc of one id,
    or a free of an id that is not live.
    """
    m = AllocatorModel(settings, **kwargs)
    at_peak = 0
    for ev in events:
        kind = ev[0]
        if kind == "alloc":
            before = m.peak_requested
            m.malloc(ev[1], int(ev[2]))  # type: ignore[call-overload]
            if m.peak_requested > before or m.peak_requested == 0:
                at_peak = m.reserved
        elif kind == "free":
            m.free(ev[1])
        else:
            raise ValueError(f"unknown allocator event {kind!r}; expected 'alloc' or 'free'")
    return ReplayResult(
        peak_reserved=m.peak_reserved,
        peak_allocated=m.peak_allocated,
        peak_requested=m.peak_requested,
        final_reserved=m.reserved,
        final_allocated=m.allocated,
        segments=m.segments,
        reserved_at_peak_requested=at_peak,
    )


def reserved_for(events: Iterable[Event], settings: Optional[Settings] = None, **kwargs) -> int:
    """Peak reserved bytes when torch_npu's caching allocator serves ``events``.

    ``events``: ordered ``("alloc", id, nbytes)`` / ``("free", id)`` tuples (ids
    any hashable; ``nbytes`` = storage bytes).  ``settings`` / ``kwargs``: see
    :class:`Settings` (e.g. ``expandable_segments=True``).  Nothing is released
    to the device, so this is the reserve of a run that does not reach the limit.

    >>> reserved_for([("alloc", 0, 4)])
    2097152
    """
    return replay(events, settings, **kwargs).peak_reserved
