"""OOM message parsing and the fragmentation / other-process / shortage verdict."""

from __future__ import annotations

import pytest

from ascendify.diagnose import oom

# The example of the research notes §5.4 (format of torch_npu NPUCachingAllocator.cpp).
DOC = ("NPU out of memory. Tried to allocate 260.00 MiB (NPU 0; 28.50 GiB total capacity; 10.24 GiB already allocated; "
       "10.24 GiB current active; 149.57 MiB free; 10.28 GiB reserved in total by PyTorch) If reserved memory is >> "
       "allocated memory try setting max_split_size_mb to avoid fragmentation.")


def test_parse_documented_message():
    n = oom.parse(DOC)
    assert n == {
        "requested": 260.0,
        "total": 28.5 * 1024,        # 29184.0 MiB
        "allocated": 10.24 * 1024,   # 10485.76 MiB
        "active": 10.24 * 1024,
        "free": 149.57,
        "reserved": 10.28 * 1024,    # 10526.72 MiB
        "device": 0,
    }


def test_documented_example_is_memory_outside_pytorch():
    j = oom.judge(oom.parse(DOC))
    # reserved - allocated = 10526.72 - 10485.76 = 40.96 MiB < 260 MiB requested → not fragmentation
    assert j["cached_unused"] == pytest.approx(40.96)
    # total - reserved - free = 29184 - 10526.72 - 149.57 = 18507.71 MiB (18.07 GiB) ≥ max(260, 2918.4)
    assert j["outside"] == pytest.approx(18507.71)
    assert j["verdict"] == oom.OTHER_PROCESS
    assert "18.07 GiB" in j["advice"]
    assert any("40.96 MiB < requested 260.00 MiB" in e for e in j["explain"])


def test_fragmentation():
    line = ("NPU out of memory. Tried to allocate 1.50 GiB (NPU 2; 32.00 GiB total capacity; 20.00 GiB already allocated; "
            "20.00 GiB current active; 512.00 MiB free; 31.00 GiB reserved in total by PyTorch)")
    j = oom.judge(oom.parse(line))
    # reserved - allocated = 31744 - 20480 = 11264 MiB ≥ 1536 MiB requested
    assert j["cached_unused"] == pytest.approx(11264.0)
    assert j["verdict"] == oom.FRAGMENTATION
    assert "expandable_segments:True" in j["advice"]


def test_real_shortage():
    line = ("NPU out of memory. Tried to allocate 4.00 GiB (NPU 1; 64.00 GiB total capacity; 61.50 GiB already allocated; "
            "61.50 GiB current active; 1.00 GiB free; 62.00 GiB reserved in total by PyTorch)")
    j = oom.judge(oom.parse(line))
    # reserved - allocated = 512 MiB < 4096; outside = 65536 - 63488 - 1024 = 1024 MiB < max(4096, 6553.6)
    assert j["cached_unused"] == pytest.approx(512.0)
    assert j["outside"] == pytest.approx(1024.0)
    assert j["verdict"] == oom.SHORTAGE


def test_optional_fields_and_units():
    # no "current active", an "allowed" field, KiB and bytes
    line = ("NPU out of memory. Tried to allocate 512.00 KiB (NPU 7; 1.00 GiB total capacity; 900.00 MiB already allocated; "
            "0 bytes free; 1000.00 MiB allowed; 1000.00 MiB reserved in total by PyTorch)")
    n = oom.parse(line)
    assert n["requested"] == 0.5 and n["free"] == 0.0 and n["allowed"] == 1000.0 and "active" not in n
    assert n["device"] == 7
    # reserved - allocated = 100 MiB ≥ 0.5 MiB → fragmentation
    assert oom.judge(n)["verdict"] == oom.FRAGMENTATION


def test_no_numbers():
    assert oom.parse("NPU out of memory.") is None
