"""Hand-computed cases for the NPUCachingAllocator model (ascendify.fit.allocator).

Every expected number below is worked out by hand from the rules in the module
docstring (32-byte pad, 512-byte rounding, 2 MiB small segments, 20 MiB large
segments below 10 MiB, 2 MiB rounding above).
"""

from __future__ import annotations

import pytest

from ascendify.errors import AscendifyError
from ascendify.fit.allocator import (
    MiB,
    RUNTIME_RESERVE_BYTES,
    RUNTIME_RESERVE_VERIFIED,
    AllocatorModel,
    Settings,
    allocation_size,
    replay,
    reserved_for,
    round_size,
)


def allocs(*sizes):
    return [("alloc", i, n) for i, n in enumerate(sizes)]


# ---------------------------------------------------------------- rounding
@pytest.mark.parametrize("n, expected", [
    (0, 0),
    (1, 512),            # 1 + 32 = 33 -> 512
    (480, 512),          # 480 + 32 = 512
    (481, 1024),         # 513 -> 1024
    (512, 1024),         # a 512-byte tensor takes two minimum blocks because of the pad
    (4096, 4608),        # 4128 -> 9 * 512
    (MiB - 32, MiB),     # largest small-pool request
    (MiB, MiB + 512),    # 1 MiB + 32 -> 2049 * 512: large pool
])
def test_round_size_pads_32_then_rounds_to_512(n, expected):
    assert round_size(n) == expected


def test_round_size_without_pad_on_950():
    s = Settings.for_chip("Ascend950DT", cann_version="9.1.0")
    assert s.pad_bytes == 0
    assert round_size(512, s) == 512
    assert round_size(MiB, s) == MiB
    # older CANN, or another chip, keeps the pad
    assert Settings.for_chip("Ascend950DT", cann_version="8.5.0").pad_bytes == 32
    assert Settings.for_chip("Ascend910B3", cann_version="9.1.0").pad_bytes == 32
    assert Settings.for_chip("Ascend950PR").pad_bytes == 32


def test_round_size_power2_divisions():
    s = Settings(roundup_power2_divisions=4)
    # 1200 KiB + 32 lies between 1 MiB and 2 MiB; quarters are 1, 1.25, 1.5, 1.75 MiB -> 1.25 MiB
    assert round_size(1200 * 1024, s) == 1280 * 1024
    # small sizes (<= 512 * divisions) keep 512-byte rounding
    assert round_size(1000, s) == 1536


def test_allocation_size_segments():
    assert allocation_size(round_size(100)) == 2 * MiB
    assert allocation_size(round_size(MiB)) == 20 * MiB
    assert allocation_size(round_size(10 * MiB - 1024)) == 20 * MiB       # 10485248 < 10 MiB
    assert allocation_size(round_size(10 * MiB)) == 12 * MiB              # >= 10 MiB: own segment, 2 MiB units
    assert allocation_size(round_size(12 * MiB)) == 14 * MiB              # 12 MiB + 512 -> 14 MiB
    assert allocation_size(round_size(3 * MiB), Settings(large_segment_size=64 * MiB)) == 64 * MiB
    assert allocation_size(round_size(3 * MiB), Settings(page_size_1g=True)) == 1024 * MiB


# ---------------------------------------------------------------- pools
def test_small_vs_large_pool():
    assert reserved_for(allocs(MiB - 32)) == 2 * MiB      # small pool segment
    assert reserved_for(allocs(MiB)) == 20 * MiB          # pad pushes it into the large pool
    assert reserved_for(allocs(12 * MiB)) == 14 * MiB
    assert reserved_for(allocs(100, 3 * MiB)) == 22 * MiB  # one segment in each pool
    assert reserved_for([("alloc", "z", 0)]) == 0


def test_small_pool_packs_into_2mib_segments():
    quarter = 512 * 1024 - 32                              # rounds to exactly 512 KiB
    assert reserved_for(allocs(*[quarter] * 4)) == 2 * MiB  # 4 x 512 KiB fill one segment, last not split
    assert reserved_for(allocs(*[quarter] * 5)) == 4 * MiB


# ---------------------------------------------------------------- reuse, split, merge
def test_reuse_after_free():
    ev = [("alloc", "a", 4 * MiB), ("free", "a"), ("alloc", "b", 4 * MiB), ("alloc", "c", 4 * MiB)]
    # b reuses a's block; c splits the rest of the same 20 MiB segment
    assert reserved_for(ev) == 20 * MiB


def test_large_pool_split_and_no_split():
    m = AllocatorModel()
    assert m.malloc("a", 3 * MiB) == 3 * MiB + 512
    assert m.malloc("b", 3 * MiB) == 3 * MiB + 512          # from the split remainder
    assert m.reserved == 20 * MiB and m.segments == 1
    # 19.5 MiB: own 20 MiB segment; the 523776-byte remainder is <= 1 MiB, so not split
    assert m.malloc("c", 19 * MiB + 512 * 1024) == 20 * MiB
    assert m.reserved == 40 * MiB
    m.free("c")
    # a 5 MiB request takes the 20 MiB cached block and splits it: no new segment
    assert m.malloc("d", 5 * MiB) == 5 * MiB + 512
    assert m.reserved == 40 * MiB
    assert m.allocated == 2 * (3 * MiB + 512) + (5 * MiB + 512)


def test_free_merges_neighbours():
    m = AllocatorModel()
    for k in "abc":
        m.malloc(k, 6 * MiB)                                 # 3 x 6291968 in one 20 MiB segment
    m.free("a")
    m.free("b")                                              # merges with a: 12583936 free at the start
    # 12 MiB + 512 fits the merged block; the 512 bytes left are <= 1 MiB, so the
    # whole merged block is handed out unsplit, and no new segment is made
    assert m.malloc("d", 12 * MiB) == 2 * (6 * MiB + 512) == 12583936
    assert m.reserved == 20 * MiB


def test_fragmentation_reserved_exceeds_peak_live():
    six = 6 * MiB + 512                                      # round_size(6 MiB)
    ev = allocs(6 * MiB, 6 * MiB, 6 * MiB) + [("free", 0), ("free", 2), ("alloc", "d", 8 * MiB)]
    r = replay(ev)
    # A and C are free (6291968 and, merged with the tail, 8387648) but neither holds
    # 8 MiB + 512, so a second 20 MiB segment is created.
    assert r.peak_reserved == 40 * MiB
    assert r.peak_allocated == 3 * six == 18875904
    assert r.peak_reserved > 2 * r.peak_allocated
    assert r.final_allocated == six + 8 * MiB + 512


def test_expandable_segments_avoid_a_second_segment():
    ev = [("alloc", "a", 12 * MiB), ("free", "a"), ("alloc", "b", 16 * MiB)]
    # classic: a gets its own 14 MiB segment, b (16 MiB + 512) does not fit it -> 18 MiB more
    assert reserved_for(ev) == 32 * MiB
    # expandable: one segment mapped in 20 MiB pages; b reuses the freed, merged tail
    assert reserved_for(ev, expandable_segments=True) == 20 * MiB
    assert reserved_for(ev, Settings.from_conf("expandable_segments:True")) == 20 * MiB


def test_expandable_grows_by_pages_and_merges_tail():
    m = AllocatorModel(expandable_segments=True)
    for i in range(7):
        m.malloc(i, 3 * MiB)                                 # 6 fit the first 20 MiB page
    assert m.reserved == 40 * MiB and m.segments == 1
    m2 = AllocatorModel(Settings(expandable_segments=True, large_segment_size=64 * MiB))
    m2.malloc("x", 100 * MiB)
    assert m2.reserved == 128 * MiB


def test_max_split_size_keeps_big_blocks_whole():
    ev = [("alloc", "big", 40 * MiB), ("free", "big"), ("alloc", "s", 5 * MiB)]
    assert reserved_for(ev) == 42 * MiB                      # 5 MiB request splits the cached 42 MiB block
    s = Settings.from_conf("max_split_size_mb:32")
    assert s.max_split_size == 32 * MiB
    assert reserved_for(ev, s) == 42 * MiB + 20 * MiB        # oversize block not handed to a small request


# ---------------------------------------------------------------- settings, errors
def test_from_conf():
    s = Settings.from_conf("expandable_segments:True, segment_size_mb:64,garbage_collection_threshold:0.8")
    assert s.expandable_segments and s.expandable_page() == 64 * MiB
    assert s.large_segment_size == 20 * MiB                  # segment_size_mb acts on expandable pages only
    assert s.garbage_collection_threshold == 0.8
    both = Settings.from_conf("segment_size_mb:64,large_segment_size_mb:40")
    assert both.large_segment_size == 40 * MiB and both.expandable_page() == 40 * MiB
    # segment_size_mb leaves classic 1-10 MiB segments at 20 MiB; large_segment_size_mb does not
    assert reserved_for(allocs(3 * MiB), Settings.from_conf("segment_size_mb:64")) == 20 * MiB
    assert reserved_for(allocs(3 * MiB), Settings.from_conf("large_segment_size_mb:64")) == 64 * MiB
    assert reserved_for(allocs(3 * MiB), Settings.from_conf("expandable_segments:True,segment_size_mb:64")) == 64 * MiB
    assert Settings.from_conf("page_size:1g").page_size_1g
    assert Settings.from_conf("") == Settings()
    with pytest.raises(AscendifyError, match="max_split_size_mb"):
        Settings.from_conf("max_split_size_mb:lots")
    with pytest.raises(AscendifyError, match="roundup_power2_divisions"):
        Settings.from_conf("roundup_power2_divisions:[256:1,>:8]")
    with pytest.raises(AscendifyError, match="key:value"):
        Settings.from_conf("expandable_segments")


def test_bad_events():
    with pytest.raises(ValueError, match="already live"):
        reserved_for([("alloc", 1, 10), ("alloc", 1, 10)])
    with pytest.raises(ValueError, match="unknown allocation id"):
        reserved_for([("free", 7)])
    with pytest.raises(ValueError, match="unknown allocator event"):
        reserved_for([("realloc", 1, 10)])


def test_runtime_reserve_is_marked_unverified():
    assert RUNTIME_RESERVE_VERIFIED is False
    assert 3 * 1024 * MiB < RUNTIME_RESERVE_BYTES <= 4 * 1024 * MiB


def test_hccl_buffer_bytes():
    from ascendify.fit.allocator import hccl_buffer_bytes
    assert hccl_buffer_bytes(0) == 0
    assert hccl_buffer_bytes(1) == 400 * MiB                 # 2 x 200 MB per communicator
    assert hccl_buffer_bytes(3, buffsize_mb=50) == 300 * MiB


from hypothesis import given, settings as hsettings, strategies as st  # noqa: E402

_sizes = st.one_of(st.integers(0, 4096), st.integers(4097, 2 * MiB), st.integers(2 * MiB, 30 * MiB))


@hsettings(max_examples=150, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), _sizes, st.integers(0, 10 ** 6)), max_size=60),
       expandable=st.booleans(), max_split=st.sampled_from([None, 24 * MiB]))
def test_invariants_hold_under_random_replay(ops, expandable, max_split):
    m = AllocatorModel(expandable_segments=expandable, max_split_size=max_split)
    live = []
    peak = 0
    for n, (do_free, size, pick) in enumerate(ops):
        if do_free and live:
            m.free(live.pop(pick % len(live)))
        else:
            got = m.malloc(n, size)
            assert got >= round_size(size)
            live.append(n)
        m.check()
        assert m.requested <= m.allocated <= m.reserved
        assert m.reserved >= peak                              # nothing is released
        peak = m.reserved
    assert m.peak_reserved == m.reserved
