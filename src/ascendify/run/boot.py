"""Activation of the emulated Ascend host in one process.

``activate(config)`` runs at interpreter start (sitecustomize): it checks torch, opens the event file and
arranges for :func:`install` to run when torch_npu would load:

* torch_npu >= 2.5 autoloads through torch's backend entry points: ``import torch`` ends by loading it
  (pytorch RFC "Autoload Device Extension", pytorch/pytorch#122468, merged in PR #127074 for torch 2.5;
  tutorial "Autoloading Out-of-Tree Extension" (pytorch.org/tutorials/prototype/python_extension_autoload),
  which names Huawei Ascend NPU as an example and ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` as the switch that
  turns it off; torch_npu's entry point is ``torch_npu:_autoload``, as the "Failed to load the backend
  extension: torch_npu" tracebacks show).
* older releases: ``torch.npu`` exists only after ``import torch_npu``.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional

from ascendify.errors import AscendifyError

SUPPORTED_TORCH = ("2.13", "2.13")   # tested: torch 2.13.0 (CPU build); others refused (ASCENDIFY_RUN_ANY_TORCH=1 tries)
AUTOLOAD_FROM = (2, 5)

_COMMON_LIMITS = [
    "numerics are the CPU kernels': no HF32, no NPU fp16/bf16 accumulation, no internal (NZ) formats, so results "
    "match a CPU run, not a card",
    "execution is synchronous: no asynchronous device errors; streams and events complete at once",
    "memory statistics are the emulator's own count of npu tensor bytes, not torch_npu's caching allocator; "
    "out-of-memory only above the chip's HBM size",
    "torch_npu custom ops (torch_npu.npu_*) and torch_npu.optim raise NotImplementedError",
    "graph mode (torch.compile, torchair, npugraph) runs eagerly",
    "autocast('npu') uses CUDA's op lists (the op KB has no torch_npu autocast lists)",
    "AI_CPU placement and conditional fallbacks inside libtorch_npu are not modelled (only the KB's op classes)",
    "hccl runs over gloo: no HCCL timeouts, rank tables or ASCEND_RT_VISIBLE_DEVICES",
    "a CPU generator passed to an npu op is accepted (a card raises)",
]
_PYTHON_LIMITS = [
    "in-place shape or storage changes of npu tensors (resize_, set_, unsqueeze_, out= resizing) are not supported",
    "torch.Generator(device='npu') is not supported",
    "C++ sees every npu tensor on device 0 (the index is kept in Python); type(t) is a Python subclass",
    "ops torch implements as device-generic composites (CompositeExplicitAutograd) are judged as one op, "
    "not by the ops inside them",
]


def limits(mode: str) -> List[str]:
    """What mode "shim" / "python" cannot emulate (one sentence each)."""
    if mode == "python":
        return _COMMON_LIMITS + _PYTHON_LIMITS
    return list(_COMMON_LIMITS)


def _torch_version() -> Optional[str]:
    t = sys.modules.get("torch")
    if t is not None and hasattr(t, "__version__"):
        return str(t.__version__)
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover
        return None
    try:
        return version("torch")
    except PackageNotFoundError:
        return None


def check_torch(version: Optional[str] = None) -> str:
    v = version or _torch_version()
    lo, hi = SUPPORTED_TORCH
    rng = lo if lo == hi else f"{lo} to {hi}"
    if v is None:
        raise AscendifyError(f"ascendify run: torch is not installed in this Python ({sys.executable}); "
                             f"the emulator needs torch {rng}")
    key = tuple(int(x) for x in v.split("+")[0].split(".")[:2] if x.isdigit())

    def k(s):
        return tuple(int(x) for x in s.split("."))
    if not (k(lo) <= key <= k(hi)) and os.environ.get("ASCENDIFY_RUN_ANY_TORCH") != "1":
        raise AscendifyError(f"ascendify run: torch {v} is not supported by the emulator (supported: torch {rng})")
    return v


def resolve_mode(mode: str = "auto") -> str:
    """"shim" when the C++ shim is built or can be built here, else "python" (mode "auto")."""
    if mode in ("shim", "python"):
        return mode
    from ascendify.run import shim

    return "shim" if shim.cached_library() or shim.can_build() else "python"


def autoloads(release: str) -> bool:
    if os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD") == "0":
        return False
    try:
        major, minor = (int(x) for x in release.split(".")[:2])
    except ValueError:
        return True
    return (major, minor) >= AUTOLOAD_FROM


class _State:
    cfg = None
    mode: Optional[str] = None
    installed = False
    installing = False
    info: Dict[str, Any] = {}


S = _State()


def activate(config: Dict[str, Any]) -> Dict[str, Any]:
    """Make this process an emulated Ascend host (idempotent).  Raises AscendifyError (one line)."""
    if S.cfg is not None:
        return S.info
    from ascendify.run import config as cfgmod, events

    tv = check_torch()
    cfg = cfgmod.from_dict(config)
    mode = resolve_mode(cfg.mode)
    if mode == "shim" and cfg.mode == "shim":
        from ascendify.run import shim

        if not (shim.cached_library() or shim.can_build()):
            raise AscendifyError("ascendify run: mode 'shim' needs a C++ compiler and ninja (none found); "
                                 "use mode 'python' or install g++ (docs/run.md)")
    S.cfg, S.mode = cfg, mode
    S.info = {"mode": mode, "torch_npu": cfg.torch_npu, "autoload": autoloads(cfg.torch_npu)}
    if cfg.events_dir:
        events.configure(cfg.events_dir, cfg.project_root)
        events.install_hooks()
    else:
        events.configure(None, cfg.project_root)
    rank = os.environ.get("RANK")
    events.emit("start", pid=os.getpid(), rank=int(rank) if rank and rank.isdigit() else None, argv=list(sys.argv),
                torch_npu=cfg.torch_npu, chip=cfg.chip, mode=mode, limits=limits(mode), torch=tv,
                devices=cfg.devices, release_note=cfg.release_note)
    if os.environ.get("CUDA_VISIBLE_DEVICES") is None:
        # a CUDA build of torch on a GPU machine must not see the GPU (as on an NPU host)
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    from ascendify.run import torch_npu_stub

    sys.meta_path.insert(0, torch_npu_stub.Finder(install, autoload=S.info["autoload"] and "torch" not in sys.modules))
    if "torch" in sys.modules and S.info["autoload"]:
        install()
    return S.info


def install() -> Dict[str, Any]:
    """Install the emulator into torch (once): the npu device, KB-judged ops, amp, hccl, torch_npu."""
    if S.installed or S.installing:
        return S.info
    if S.cfg is None:
        raise AscendifyError("ascendify run: the emulator is not activated (ASCENDIFY_RUN_CONFIG unset)")
    S.installing = True
    try:
        _install(S.cfg)
        S.installed = True
    finally:
        S.installing = False
    return S.info


def _install(cfg) -> None:
    import time

    t0 = time.perf_counter()
    import torch

    from ascendify.kb import ops as kbops
    from ascendify.run import amp, common, config as cfgmod, device as D, dist, events, patches, policy
    from ascendify.run import torch_npu_stub

    torch.utils.rename_privateuse1_backend("npu")
    release = kbops.load_release(cfg.torch_npu)
    policy.configure(release, cfg.fallback_disabled)
    capacity = cfgmod.hbm_bytes(cfg.chip)
    if S.mode == "shim":
        from ascendify.run import shim_backend as backend_mod

        backend = backend_mod.ShimBackend()
    else:
        from ascendify.run import python_backend as backend_mod

        backend = backend_mod.PythonBackend()
    D.init(cfg.devices, cfg.chip, capacity, cfgmod.bf16_supported(cfg.chip), backend, cpu_rng=cfg.cpu_rng)
    try:
        n_direct = backend_mod.install(release, cfg.devices, capacity)
    except Exception as e:  # noqa: BLE001 - a shim that does not build: mode auto takes the Python mode
        if S.mode != "shim" or cfg.mode != "auto":
            raise
        reason = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        print(f"ascendify run: the C++ shim did not build or load ({reason}); using the pure-Python mode",
              file=sys.stderr)
        S.mode = S.info["mode"] = "python"
        events.emit("mode", mode="python", reason=reason, limits=limits("python"))
        from ascendify.run import python_backend as backend_mod

        backend = backend_mod.PythonBackend()
        D.init(cfg.devices, cfg.chip, capacity, cfgmod.bf16_supported(cfg.chip), backend, cpu_rng=cfg.cpu_rng)
        n_direct = backend_mod.install(release, cfg.devices, capacity)
    npu = D.build_module("torch_npu.npu")
    torch._register_device_module("npu", npu)
    torch.utils.generate_methods_for_privateuse1_backend()
    if S.mode == "python":
        backend_mod.after_module()
    n_fused = common.install_fused(release)
    n_amp = amp.install()
    dist.install()
    patches.install(S.mode, npu)
    mods = torch_npu_stub.build(cfg.torch_npu, npu, torch_npu_stub._Loader(install))
    sys.modules.update(mods)
    events.on_exit(patches.exit_events)
    S.info.update(direct_kernels=n_direct, fused_ops=n_fused, autocast_ops=n_amp,
                  install_seconds=round(time.perf_counter() - t0, 3))
    if S.mode == "python" and not os.environ.get("ASCENDIFY_RUN_SAID_LIMITS"):
        os.environ["ASCENDIFY_RUN_SAID_LIMITS"] = "1"  # once per run, not once per worker
        why = "as configured" if cfg.mode == "python" else "no C++ compiler and ninja found"
        print(f"ascendify run: pure-Python mode ({why}): it cannot emulate: "
              + "; ".join(_PYTHON_LIMITS), file=sys.stderr)
