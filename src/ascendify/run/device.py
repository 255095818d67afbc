"""``torch.npu`` / ``torch_npu.npu``: devices, memory statistics, RNG (one generator per device), streams,
events and amp, backed by the active backend (shim or python)."""

from __future__ import annotations

import threading
import time
import types
from typing import Any, List, Optional

import torch

_tls = threading.local()


class Backend:
    """What device.py needs from a mode: current device and the memory accounting."""

    def current_device(self) -> int: ...
    def set_device(self, idx: int) -> None: ...
    def mem_stats(self, idx: int) -> "tuple[int, int, int, int]": ...   # allocated, peak, allocs, ooms
    def reset_peak(self, idx: int) -> None: ...


class _S:
    count = 8
    chip = "Ascend910B3"
    capacity = 64 << 30
    bf16 = True
    backend: Optional[Backend] = None
    gens: List[torch.Generator] = []
    gen_ids: set = set()
    reserved_peak: List[int] = []
    cpu_rng = False


S = _S()
_DEFAULT_SEED = 67280421310721  # torch's default_rng_seed_val, as for CPU and CUDA


def init(count: int, chip: str, capacity: int, bf16: bool, backend: Backend, cpu_rng: bool = False) -> None:
    """``cpu_rng`` (config key, ``ascendify run --cpu-rng``): every npu device "generator" is the CPU default
    generator, and torch.npu's seeding calls leave it alone (as torch.cuda's do on a CUDA-less machine), so
    random ops on npu tensors draw exactly what a plain CPU run of the original draws."""
    S.count, S.chip, S.capacity, S.bf16, S.backend = count, chip, capacity, bf16, backend
    S.cpu_rng = bool(cpu_rng)
    if S.cpu_rng:
        S.gens = [torch.default_generator] * count
    else:
        S.gens = [torch.Generator() for _ in range(count)]
        for g in S.gens:
            g.manual_seed(_DEFAULT_SEED)
    S.gen_ids = {id(g) for g in S.gens}
    S.reserved_peak = [0] * count


def check_index(i: int) -> int:
    if not 0 <= i < S.count:
        raise RuntimeError(f"Invalid device argument : did you call init? (device {i}, device_count {S.count})\n"
                           f"[ERROR] (PID, Device:{i}, RankID:-1) ERR00002 PTA invalid parameter")
    return i


def index_of(device: Any = None) -> int:
    """Device index of an int / "npu:1" / torch.device / None (= current)."""
    if device is None:
        return S.backend.current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return check_index(device)
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "npu":
            raise ValueError(f"Expected a npu device, but got: {device}")
        return S.backend.current_device() if device.index is None else check_index(device.index)
    raise ValueError(f"Invalid device, must be npu device, got {device!r}")


def generator(idx: int) -> torch.Generator:
    return S.gens[idx]


# ------------------------------------------------------------------------------------------------ streams
class Stream:
    """An NPU stream of a synchronous device: every operation has completed when it returns."""

    def __new__(cls, device=None, priority=0, **kwargs):
        self = object.__new__(cls)
        self.device = torch.device("npu", index_of(device))
        self.priority = priority
        self.npu_stream = 0
        return self

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def wait_stream(self, stream) -> None:
        pass

    def wait_event(self, event) -> None:
        pass

    def record_event(self, event=None):
        event = event if event is not None else Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and other.device == self.device and other is self

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return f"<torch_npu.npu.Stream device={self.device} npu_stream=0x0>"

    def __enter__(self):
        self._ctx = StreamContext(self)
        return self._ctx.__enter__()

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


class Event:
    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self._t: Optional[float] = None

    def record(self, stream=None) -> None:
        self._t = time.perf_counter()

    def wait(self, stream=None) -> None:
        pass

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end_event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._t is None or end_event._t is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._t - self._t) * 1000.0


_default_streams: dict = {}


def default_stream(device=None) -> Stream:
    i = index_of(device)
    s = _default_streams.get(i)
    if s is None:
        s = _default_streams[i] = Stream(i)
    return s


def current_stream(device=None) -> Stream:
    s = getattr(_tls, "stream", None)
    if s is not None and (device is None or s.device.index == index_of(device)):
        return s
    return default_stream(device)


def set_stream(stream) -> None:
    if stream is not None:
        _tls.stream = stream


class StreamContext:
    """``torch.npu.stream(stream)`` (torch_npu's signature: one argument named ``stream``; None = no-op)."""

    def __init__(self, stream):
        self.stream = stream
        self._prev = None

    def __enter__(self):
        if self.stream is None:
            return None
        self._prev = getattr(_tls, "stream", None)
        _tls.stream = self.stream
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            _tls.stream = self._prev
        return False


def stream(stream=None) -> StreamContext:
    return StreamContext(stream)


# ------------------------------------------------------------------------------------------------ the module
def _reserved(alloc: int) -> int:
    seg = 2 << 20  # the caching allocator grows in 2 MiB segments
    return (alloc + seg - 1) // seg * seg


def build_module(name: str = "torch_npu.npu") -> types.ModuleType:
    m = types.ModuleType(name)
    m.__file__ = __file__
    m.Stream, m.Event, m.StreamContext, m.ExternalStream = Stream, Event, StreamContext, Stream
    m.is_available = lambda: True
    m.device_count = lambda: S.count
    m.current_device = lambda: S.backend.current_device()

    def set_device(device) -> None:
        S.backend.set_device(index_of(device))

    m.set_device = set_device
    m.synchronize = lambda device=None: (index_of(device), None)[1]

    class device:  # noqa: N801 - torch.npu.device(idx) context manager
        def __init__(self, device):
            self.idx = -1 if device is None or device == -1 else index_of(device)
            self.prev = -1

        def __enter__(self):
            if self.idx >= 0:
                self.prev = S.backend.current_device()
                S.backend.set_device(self.idx)

        def __exit__(self, *exc):
            if self.idx >= 0:
                S.backend.set_device(self.prev)
            return False

    class device_of(device):  # noqa: N801
        def __init__(self, obj):
            super().__init__(obj.get_device() if getattr(obj, "device", None) is not None
                             and obj.device.type == "npu" else -1)

    m.device, m.device_of = device, device_of
    m.is_initialized = lambda: True
    m.init = lambda: None
    m._lazy_init = lambda: None
    m._is_in_bad_fork = lambda: False
    m.get_device_name = lambda device=None: S.chip
    m.get_device_capability = lambda device=None: None
    m.get_device_properties = lambda device=None: types.SimpleNamespace(
        name=S.chip, total_memory=S.capacity, cube_core_num=24, vector_core_num=48, L2_cache_size=192 << 20)
    m.is_bf16_supported = lambda *a, **k: S.bf16
    m.get_amp_supported_dtype = lambda: [torch.float16, torch.bfloat16] if S.bf16 else [torch.float16]
    m.is_autocast_enabled = lambda: torch.is_autocast_enabled("npu")
    m.get_autocast_dtype = lambda: torch.get_autocast_dtype("npu")
    m.set_autocast_enabled = lambda e: torch.set_autocast_enabled("npu", e)
    m.set_autocast_dtype = lambda d: torch.set_autocast_dtype("npu", d)
    # streams
    m.current_stream, m.default_stream, m.set_stream, m.stream = current_stream, default_stream, set_stream, stream
    m._get_stream = current_stream
    # memory: the backend's own accounting of npu tensors
    st = lambda d: S.backend.mem_stats(index_of(d))  # noqa: E731

    def memory_reserved(device=None):
        i = index_of(device)
        r = _reserved(S.backend.mem_stats(i)[0])
        S.reserved_peak[i] = max(S.reserved_peak[i], r)
        return r

    def max_memory_reserved(device=None):
        i = index_of(device)
        return max(S.reserved_peak[i], _reserved(S.backend.mem_stats(i)[1]))

    def reset_peak_memory_stats(device=None):
        i = index_of(device)
        S.backend.reset_peak(i)
        S.reserved_peak[i] = 0

    def memory_stats(device=None):
        a, p, n, o = st(device)
        return {"allocated_bytes.all.current": a, "allocated_bytes.all.peak": p,
                "reserved_bytes.all.current": _reserved(a), "reserved_bytes.all.peak": _reserved(p),
                "allocation.all.allocated": n, "num_ooms": o, "num_alloc_retries": 0}

    m.memory_allocated = lambda device=None: st(device)[0]
    m.max_memory_allocated = lambda device=None: st(device)[1]
    m.memory_reserved, m.max_memory_reserved = memory_reserved, max_memory_reserved
    m.memory_cached, m.max_memory_cached = memory_reserved, max_memory_reserved
    m.reset_peak_memory_stats = m.reset_max_memory_allocated = reset_peak_memory_stats
    m.reset_accumulated_memory_stats = lambda device=None: None
    m.memory_stats = memory_stats
    m.empty_cache = lambda: None
    m.mem_get_info = lambda device=None: (S.capacity - memory_reserved(device), S.capacity)
    m.memory_summary = lambda device=None, abbreviated=False: (
        f"NPU {index_of(device)} (emulated by ascendify run): allocated {st(device)[0] / 2**20:.1f} MiB, "
        f"peak {st(device)[1] / 2**20:.1f} MiB")
    m.set_per_process_memory_fraction = lambda fraction, device=None: None
    # RNG: one generator per device
    m.manual_seed = lambda seed: S.gens[S.backend.current_device()].manual_seed(int(seed))
    m.manual_seed_all = lambda seed: [g.manual_seed(int(seed)) for g in S.gens] and None
    m.seed = lambda: S.gens[S.backend.current_device()].seed()
    m.seed_all = lambda: [g.seed() for g in S.gens] and None
    m.initial_seed = lambda: S.gens[S.backend.current_device()].initial_seed()
    m.get_rng_state = lambda device="npu": S.gens[index_of(device)].get_state()
    m.set_rng_state = lambda new_state, device="npu": S.gens[index_of(device)].set_state(new_state)
    m.get_rng_state_all = lambda: [g.get_state() for g in S.gens]
    m.set_rng_state_all = lambda new_states: [g.set_state(s) for g, s in zip(S.gens, new_states)] and None
    m.default_generators = tuple(S.gens)
    if S.cpu_rng:  # one RNG stream: torch.npu's seeding must not reseed the CPU generator the program's CPU run keeps
        m.manual_seed = m.manual_seed_all = m.set_rng_state = lambda *a, **k: None
        m.set_rng_state_all = lambda new_states: None
        m.seed = m.seed_all = lambda: None
    # torch_npu switches that change nothing on the CPU
    m.set_compile_mode = lambda jit_compile=False: None
    m.set_option = lambda option: None
    m.is_jit_compile_false = lambda: True
    m.config = types.SimpleNamespace(allow_internal_format=False)
    m.matmul = types.SimpleNamespace(allow_hf32=False)
    m.conv = types.SimpleNamespace(allow_hf32=True)
    m.get_sync_debug_mode = lambda: 0
    m.set_sync_debug_mode = lambda debug_mode: None
    # amp
    amp = types.ModuleType(name + ".amp")

    def autocast(enabled=True, dtype=torch.float16, cache_enabled=True):
        return torch.autocast("npu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    def GradScaler(init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,  # noqa: N802
                   enabled=True, dynamic=True):
        return torch.amp.GradScaler("npu", init_scale=init_scale, growth_factor=growth_factor,
                                    backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)

    amp.autocast, amp.GradScaler = autocast, GradScaler
    m.amp = amp
    return m
