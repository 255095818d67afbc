"""CPU emulation of the Ascend device for ``ascendify probe --run`` (child process only).

What is emulated (everything is process-global, which is why script mode runs
in a child process):

* device strings: PrivateUse1 is renamed ``npu`` (so ``torch.device("npu:0")``
  is valid) and a TorchFunctionMode maps every ``device=`` keyword and the
  device argument of ``Tensor.to`` / ``Module.to`` / ``Tensor.new_*`` from
  ``npu[:N]`` (and ``cuda[:N]``) to ``cpu``; ``Tensor.npu()`` and
  ``Module.npu()`` return the object unchanged.  Tensors report
  ``device.type == "cpu"`` afterwards.
* ``torch.npu`` / ``torch_npu.npu``: is_available() → True, device_count() → 1,
  set_device / synchronize / empty_cache / set_compile_mode / set_option →
  no-ops, manual_seed[_all] → torch.manual_seed, memory statistics → 0,
  get_device_name() → "Ascend (emulated on CPU)", Event / Stream / current_stream
  → host-timed stand-ins, amp.autocast → torch.autocast("cpu", dtype=…),
  amp.GradScaler → torch.amp.GradScaler("cpu"); ``torch.autocast("npu")`` and
  ``torch.amp.GradScaler("npu")`` use the CPU.
* ``import torch_npu`` gives a stand-in module (``__version__`` = the probed
  release); ``torch_npu.contrib.transfer_to_npu`` imports as a no-op;
  ``torch_npu.optim.NpuFused{Adam,AdamW,SGD}`` → torch.optim equivalents.
  Other ``torch_npu.*`` attributes (custom ``npu_*`` ops) raise
  ``NotImplementedError`` naming the API, and are listed in the report.
* ``torch.distributed.init_process_group(backend="hccl")`` → ``gloo``
  (single process: RANK=0, WORLD_SIZE=1, MASTER_ADDR/PORT set when absent);
  ``DistributedDataParallel(device_ids=[…])`` on CPU modules → ``device_ids=None``.
* ``torch.save`` writes into a temporary folder instead of the given path;
  ``Tensor.pin_memory()`` (DataLoader ``pin_memory=True``) is a no-op.

Not emulated: NPU numerics (fp16/bf16 kernels run on the CPU), HCCL collectives
across several processes, NPU memory limits, torch_npu custom ops,
``torch_npu.profiler``, graph mode (torchair), ``Tensor.is_npu`` /
``device.type == "npu"`` checks (they see "cpu"), CANN environment variables.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import types

USED: list = []


class ProbeStop(BaseException):
    """Raised inside the script to stop it (max steps / seconds); not an Exception."""


def _use(what: str) -> None:
    if what not in USED:
        USED.append(what)


class _quiet:
    """Suspend recording (state["recorder"]) but still let the optimizer hooks run."""

    def __init__(self, state):
        self.rec = state.get("recorder")
        self.cm = None

    def __enter__(self):
        if self.rec is not None:
            self.cm = self.rec.suspended()
            self.cm.__enter__()

    def __exit__(self, *a):
        if self.cm is not None:
            self.cm.__exit__(*a)
        return False


def _map_dev(d):
    import torch
    if isinstance(d, torch.device) and d.type in ("npu", "cuda", "privateuseone"):
        _use(f"device {d.type} → cpu")
        return torch.device("cpu")
    if isinstance(d, str):
        head = d.split(":")[0]
        if head in ("npu", "cuda"):
            _use(f"device {head} → cpu")
            return "cpu"
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    return d


def install(release: str, state: dict) -> list:
    """Install every patch; returns the TorchFunctionModes to enter (device mapping)."""
    import torch
    import torch.nn as nn
    from torch.overrides import TorchFunctionMode

    try:
        torch.utils.rename_privateuse1_backend("npu")
    except RuntimeError:
        pass
    npu = _npu_module(torch)
    try:
        torch._register_device_module("npu", npu)
    except RuntimeError:
        setattr(torch, "npu", npu)
    torch.Tensor.npu = lambda self, *a, **k: (_use("Tensor.npu() → no-op"), self)[1]
    nn.Module.npu = lambda self, *a, **k: (_use("Module.npu() → no-op"), self)[1]
    # pinned host memory needs a device runtime (DataLoader(pin_memory=True) pins in its own thread)
    torch.Tensor.pin_memory = lambda self, *a, **k: (_use("Tensor.pin_memory() → no-op"), self)[1]

    _orig_autocast = torch.autocast

    class autocast(_orig_autocast):  # noqa: N801 - same name as torch's
        def __init__(self, device_type, *a, **k):
            if str(device_type).split(":")[0] in ("npu", "cuda"):
                _use(f"torch.autocast({device_type!r}) → cpu")
                device_type = "cpu"
                if k.get("dtype") is None and not a:
                    k["dtype"] = torch.float16
            super().__init__(device_type, *a, **k)
    torch.autocast = autocast
    torch.amp.autocast = autocast
    _orig_scaler = torch.amp.GradScaler

    class GradScaler(_orig_scaler):
        """torch's GradScaler on the CPU; its bookkeeping ops (unscale_/step/update) are not
        recorded — torch_npu ships its own implementation."""

        def __init__(self, device="cpu", *a, **k):
            if str(device).split(":")[0] in ("npu", "cuda"):
                _use(f"GradScaler({device!r}) → cpu")
                device = "cpu"
            k.pop("dynamic", None)
            super().__init__(device, *a, **k)

        def unscale_(self, *a, **k):
            with _quiet(state):
                return super().unscale_(*a, **k)

        def step(self, *a, **k):
            with _quiet(state):
                return super().step(*a, **k)

        def update(self, *a, **k):
            with _quiet(state):
                return super().update(*a, **k)
    torch.amp.GradScaler = GradScaler
    state["GradScaler"] = GradScaler

    tn = _torch_npu_module(torch, npu, release)
    sys.modules["torch_npu"] = tn
    sys.modules["torch_npu.npu"] = npu
    sys.modules["torch_npu.npu.amp"] = npu.amp
    sys.modules["torch_npu.contrib"] = tn.contrib
    sys.modules["torch_npu.contrib.transfer_to_npu"] = tn.contrib.transfer_to_npu
    sys.modules["torch_npu.optim"] = tn.optim

    # torch.save → temporary folder
    _orig_save = torch.save
    saved_dir: list = []

    def save(obj, f, *a, **k):
        if isinstance(f, (str, os.PathLike)):
            if not saved_dir:  # inside the parent's temporary folder when there is one (removed afterwards)
                base = os.environ.get("ASCENDIFY_PROBE_TMP")
                saved_dir.append(tempfile.mkdtemp(prefix="saved-", dir=base if base and os.path.isdir(base) else None))
            tmp = saved_dir[0]
            target = os.path.join(tmp, os.path.basename(os.fspath(f)) or "saved.pt")
            _use(f"torch.save → {tmp}")
            return _orig_save(obj, target, *a, **k)
        return _orig_save(obj, f, *a, **k)
    torch.save = save

    _patch_distributed(torch)

    # step counting
    def post_step(opt, args, kwargs):
        state["steps"] += 1
        if state["max_steps"] and state["steps"] >= state["max_steps"]:
            state["stopped"] = f"max-steps ({state['steps']} optimizer steps)"
            raise ProbeStop()
    from torch.optim.optimizer import register_optimizer_step_post_hook
    register_optimizer_step_post_hook(post_step)

    dev_kw_funcs = {torch.Tensor.to, torch.Tensor.new_empty, torch.Tensor.new_zeros, torch.Tensor.new_ones,
                    torch.Tensor.new_full, torch.Tensor.new_tensor}

    class DeviceMap(TorchFunctionMode):
        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = kwargs or {}
            if "device" in kwargs:
                kwargs = dict(kwargs, device=_map_dev(kwargs["device"]))
            if func in dev_kw_funcs and len(args) > 1:
                args = (args[0],) + tuple(_map_dev(a) for a in args[1:])
            if func is torch.Tensor.backward:
                state["backwards"] += 1
                if state["max_steps"] and state["steps"] == 0 and state["backwards"] > state["max_steps"]:
                    state["stopped"] = f"max-steps ({state['max_steps']} backward calls, no optimizer step seen)"
                    raise ProbeStop()
            if state["deadline"] and time.monotonic() > state["deadline"]:
                state["stopped"] = f"max-seconds ({state['max_seconds']:g} s)"
                raise ProbeStop()
            return func(*args, **kwargs)

    return [DeviceMap()]


def _npu_module(torch):
    m = types.ModuleType("torch_npu.npu")
    m.__doc__ = "ascendify probe: CPU stand-in for torch.npu"

    def noop(name):
        def f(*a, **k):
            _use(f"torch.npu.{name} → no-op")
            return None
        f.__name__ = name
        return f
    m.is_available = lambda: True
    m.device_count = lambda: 1
    m.current_device = lambda: 0
    m.is_initialized = lambda: True
    m.get_device_name = lambda *a, **k: "Ascend (emulated on CPU by ascendify probe)"
    m.get_device_properties = lambda *a, **k: types.SimpleNamespace(
        name="Ascend (emulated)", total_memory=0, multi_processor_count=0)
    for name in ("set_device", "synchronize", "empty_cache", "set_compile_mode", "set_option", "init",
                 "reset_peak_memory_stats", "reset_max_memory_allocated", "set_per_process_memory_fraction",
                 "set_sync_debug_mode", "ipc_collect"):
        setattr(m, name, noop(name))
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
        setattr(m, name, lambda *a, **k: 0)
    m.mem_get_info = lambda *a, **k: (0, 0)
    m.memory_summary = lambda *a, **k: "(emulated: no NPU memory)"
    m.manual_seed = lambda s: torch.manual_seed(s)
    m.manual_seed_all = lambda s: torch.manual_seed(s)
    m.seed = lambda: torch.seed()
    m.is_bf16_supported = lambda *a, **k: True

    class Event:
        def __init__(self, enable_timing=False, **k):
            self.t = None

        def record(self, *a, **k):
            self.t = time.perf_counter()

        def synchronize(self):
            pass

        def query(self):
            return True

        def elapsed_time(self, other):
            return ((other.t or 0) - (self.t or 0)) * 1000.0

    class Stream:
        def __init__(self, *a, **k):
            pass

        def synchronize(self):
            pass

        def wait_stream(self, *a):
            pass

        def wait_event(self, *a):
            pass

        def record_event(self, ev=None):
            ev = ev or Event()
            ev.record()
            return ev

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False
    m.Event, m.Stream = Event, Stream
    m.current_stream = lambda *a, **k: Stream()
    m.default_stream = lambda *a, **k: Stream()
    m.stream = lambda s=None: s or Stream()

    class _Dev:
        def __init__(self, *a, **k):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False
    m.device = _Dev
    amp = types.ModuleType("torch_npu.npu.amp")

    def autocast(enabled=True, dtype=None, cache_enabled=True):
        _use("torch.npu.amp.autocast → torch.autocast('cpu')")
        return torch.autocast("cpu", dtype=dtype or torch.float16, enabled=enabled, cache_enabled=cache_enabled)

    def GradScaler(*a, **k):  # noqa: N802
        _use("torch.npu.amp.GradScaler → torch.amp.GradScaler('cpu')")
        return torch.amp.GradScaler("cpu", *a, **k)
    amp.autocast, amp.GradScaler = autocast, GradScaler
    m.amp = amp
    m.config = types.SimpleNamespace(allow_internal_format=False)
    m.matmul = types.SimpleNamespace(allow_hf32=False)
    m.conv = types.SimpleNamespace(allow_hf32=True)
    m.utils = types.SimpleNamespace(get_cann_version=lambda *a, **k: "unknown (emulated)")
    return m


def _torch_npu_module(torch, npu, release: str):
    tn = types.ModuleType("torch_npu")
    tn.__version__ = release + "+ascendify-emulated"
    tn.__file__ = __file__
    tn.npu = npu
    contrib = types.ModuleType("torch_npu.contrib")
    contrib.transfer_to_npu = types.ModuleType("torch_npu.contrib.transfer_to_npu")
    tn.contrib = contrib
    optim = types.ModuleType("torch_npu.optim")
    optim.NpuFusedAdamW = torch.optim.AdamW
    optim.NpuFusedAdam = torch.optim.Adam
    optim.NpuFusedSGD = torch.optim.SGD
    tn.optim = optim

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)

        def unsupported(*a, **k):
            _use(f"torch_npu.{name} (not emulated)")
            raise NotImplementedError(f"torch_npu.{name} is not emulated on the CPU by ascendify probe")
        unsupported.__name__ = name
        unsupported.__qualname__ = name
        unsupported.__module__ = "torch_npu"
        return unsupported
    tn.__getattr__ = __getattr__
    return tn


def _patch_distributed(torch):
    import socket
    try:
        import torch.distributed as dist
    except ImportError:
        return
    if not dist.is_available():
        return
    orig_init = dist.init_process_group

    def init_process_group(backend=None, *a, **k):
        if backend and "hccl" in str(backend).lower():
            _use("init_process_group(backend='hccl') → gloo")
            backend = "gloo"
        if k.get("init_method") is None and "RANK" not in os.environ:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
            _use("distributed: single process (RANK=0, WORLD_SIZE=1)")
        return orig_init(backend, *a, **k)
    dist.init_process_group = init_process_group
    orig_new_group = dist.new_group

    def new_group(*a, **k):
        if k.get("backend") and "hccl" in str(k["backend"]).lower():
            k["backend"] = "gloo"
        return orig_new_group(*a, **k)
    dist.new_group = new_group
    from torch.nn.parallel import DistributedDataParallel as DDP
    orig_ddp_init = DDP.__init__

    def ddp_init(self, module, device_ids=None, output_device=None, *a, **k):
        if device_ids is not None:
            _use("DDP(device_ids=…) → None (CPU module)")
        return orig_ddp_init(self, module, None, None, *a, **k)
    DDP.__init__ = ddp_init
