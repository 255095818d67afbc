"""Build, cache and load the C++ shim (``npu_shim.cpp``) of mode "shim".

The shared library is built once per torch version (and shim source) with
``torch.utils.cpp_extension.load`` into ``<cache>/run/torch-<version>/shim-<source hash>/`` where ``<cache>`` is
``$ASCENDIFY_CACHE_DIR`` or ``~/.cache/ascendify``.  A stamp file next to it records the source hash, so
later starts load the library directly (no compiler, no ninja: a few milliseconds).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import sys
import time
from typing import Optional

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npu_shim.cpp")
NAME = "ascendify_npu_shim"
LAST_BUILD_SECONDS: "list[float]" = []
_MODULE: list = []


def _torch_version() -> str:
    t = sys.modules.get("torch")
    if t is not None and hasattr(t, "__version__"):
        return str(t.__version__)
    from importlib.metadata import version  # without importing torch (activation runs before the program)

    return version("torch")


def cache_dir() -> str:
    """``<cache>/run/torch-<version>/shim-<source hash>``: a changed shim source never shares a build folder
    (or torch's build lock) with another one."""
    root = os.environ.get("ASCENDIFY_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "ascendify")
    return os.path.join(root, "run", "torch-" + _torch_version().replace("+", "_"), "shim-" + _source_hash())


@functools.lru_cache(maxsize=None)
def _source_hash() -> str:
    """Of ``npu_shim.cpp``, read once per process (every start checks the cached build)."""
    with open(SOURCE, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()[:16]


def _stamp_path(d: str) -> str:
    return os.path.join(d, "stamp.txt")


def cached_library() -> Optional[str]:
    """Path of a built library for this torch and this shim source, or None."""
    d = cache_dir()
    try:
        with open(_stamp_path(d), encoding="utf-8") as fh:
            h, so = fh.read().split("\n")[:2]
    except (OSError, ValueError):
        return None
    if h == _source_hash() and os.path.isfile(so):
        return so
    return None


def compiler() -> Optional[str]:
    """The C++ compiler cpp_extension would use, if one is on PATH."""
    cxx = os.environ.get("CXX", "c++")
    return shutil.which(cxx) or shutil.which("g++") or shutil.which("clang++")


def can_build() -> bool:
    if compiler() is None:
        return False
    try:
        from torch.utils.cpp_extension import is_ninja_available
    except ImportError:  # pragma: no cover - every supported torch has it
        return False
    return is_ninja_available()


def build(verbose: bool = False) -> str:
    """Build the shim if needed; return the path of the shared library (not loaded)."""
    so = cached_library()
    if so:
        return so
    from torch.utils.cpp_extension import load

    d = cache_dir()
    os.makedirs(d, exist_ok=True)
    with _build_lock(d):
        so = cached_library()  # another process may have built it while this one waited
        if so:
            return so
        # torch's own FileBaton ('lock') outlives a build that was killed, and a later build then waits on
        # it for ever; while this process holds the flock no other build of ours is running, so a 'lock'
        # left in the folder is stale.
        stale = os.path.join(d, "lock")
        if os.path.exists(stale):
            os.remove(stale)
        t0 = time.perf_counter()
        if not verbose:
            print("ascendify run: building the emulator's C++ shim for torch (once per torch version, ~15 s) ...",
                  file=sys.stderr, flush=True)
        mod = load(name=NAME, sources=[SOURCE], is_python_module=True, build_directory=d, extra_cflags=["-O1"],
                   verbose=verbose)
        return _record(d, mod, t0)


class _build_lock:
    """An exclusive ``flock`` on ``<d>/.build.lock`` (released by the kernel when the holder dies, unlike
    torch's FileBaton); a no-op where ``fcntl`` does not exist."""

    def __init__(self, d: str) -> None:
        self.path = os.path.join(d, ".build.lock")
        self.fh = None

    def __enter__(self) -> "_build_lock":
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return self
        self.fh = open(self.path, "a+")
        fcntl.flock(self.fh.fileno(), fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            import fcntl

            fcntl.flock(self.fh.fileno(), fcntl.LOCK_UN)
            self.fh.close()


def _record(d: str, mod, t0: float) -> str:
    LAST_BUILD_SECONDS.append(time.perf_counter() - t0)
    # cpp_extension names a rebuild of changed sources NAME_v1.so, NAME_v2.so, ...: take the one it loaded
    so = os.path.abspath(mod.__file__)
    _MODULE.append(mod)
    tmp = _stamp_path(d) + f".{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(_source_hash() + "\n" + so + "\n")
    os.replace(tmp, _stamp_path(d))
    return so


def load_library():
    """Build if needed and load the shim into this process; returns its Python module (as_cpu, adopt,
    mem_stats, reset_peak, configure)."""
    if _MODULE:
        return _MODULE[0]
    import importlib.machinery
    import importlib.util

    import torch  # noqa: F401 - the extension links against libtorch

    so = build()
    if _MODULE:
        return _MODULE[0]
    mod = sys.modules.get(NAME)
    if mod is None:
        loader = importlib.machinery.ExtensionFileLoader(NAME, so)
        spec = importlib.util.spec_from_file_location(NAME, so, loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        sys.modules[NAME] = mod
    _MODULE.append(mod)
    return mod
