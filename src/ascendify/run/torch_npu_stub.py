"""The stand-in ``torch_npu`` package: a real module with ``__spec__`` (diffusers and accelerate call
``importlib.util.find_spec("torch_npu")``), ``__version__`` = the target release, ``torch_npu.npu`` = the
emulated ``torch.npu``; custom ops (``torch_npu.npu_*``) raise NotImplementedError naming the API."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Callable, Optional

ORIGIN = __file__


def _unsupported(qualname: str) -> Callable:
    def op(*args, **kwargs):
        raise NotImplementedError(f"{qualname} is a torch_npu custom op (a CANN kernel); ascendify run does not "
                                  f"emulate it. Give the CPU path a reference implementation, or run this part on a card")
    op.__name__ = qualname.rsplit(".", 1)[-1]
    op.__qualname__ = qualname
    return op


class _Loader(importlib.abc.Loader):
    """Loader of the stand-in modules; ``install`` makes the emulator ready first (torch_npu < 2.5 installs
    on ``import torch_npu``)."""

    def __init__(self, install: Callable[[], None]):
        self.install = install

    def create_module(self, spec):
        self.install()
        mod = sys.modules.get(spec.name)
        if mod is None:
            raise ImportError(f"No module named '{spec.name}'", name=spec.name)
        return mod

    def exec_module(self, module):
        pass


def _spec(name: str, loader, package: bool) -> importlib.machinery.ModuleSpec:
    spec = importlib.machinery.ModuleSpec(name, loader, origin=ORIGIN, is_package=package)
    if package:
        spec.submodule_search_locations = []
    spec.has_location = False
    return spec


def build(release: str, npu_module: types.ModuleType, loader) -> "dict[str, types.ModuleType]":
    """The modules to put into sys.modules: torch_npu, torch_npu.npu, torch_npu.npu.amp, torch_npu.contrib,
    torch_npu.optim, torch_npu.utils."""
    import torch

    tn = types.ModuleType("torch_npu", "ascendify run's stand-in for torch_npu (emulated Ascend host)")
    tn.__version__ = release
    tn.__file__ = ORIGIN
    tn.__path__ = []
    tn.__spec__ = _spec("torch_npu", loader, True)
    tn.__loader__ = loader
    tn.npu = npu_module
    tn._autoload = lambda: None  # the torch.backends entry point torch_npu declares
    version = types.ModuleType("torch_npu.version")
    version.__version__ = release
    tn.version = version
    contrib = types.ModuleType("torch_npu.contrib")
    contrib.__path__ = []
    tn.contrib = contrib
    optim = types.ModuleType("torch_npu.optim")
    optim.NpuFusedAdamW = _unsupported("torch_npu.optim.NpuFusedAdamW")
    optim.NpuFusedAdam = _unsupported("torch_npu.optim.NpuFusedAdam")
    optim.NpuFusedSGD = _unsupported("torch_npu.optim.NpuFusedSGD")
    tn.optim = optim
    utils = types.ModuleType("torch_npu.utils")
    tn.utils = utils

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        if name.startswith("npu_") or name.startswith("_npu_"):
            return _unsupported(f"torch_npu.{name}")
        raise AttributeError(f"module 'torch_npu' has no attribute '{name}' (ascendify run's stand-in has "
                             f"only torch_npu.npu, contrib, optim and the npu_* custom-op names)")

    tn.__getattr__ = __getattr__
    npu_module.__spec__ = _spec("torch_npu.npu", loader, True)
    npu_module.__path__ = []
    npu_module.amp.__spec__ = _spec("torch_npu.npu.amp", loader, False)
    for mod, pkg in ((contrib, True), (optim, False), (utils, False), (version, False)):
        mod.__spec__ = _spec(mod.__name__, loader, pkg)
        mod.__file__ = ORIGIN
    del torch
    return {"torch_npu": tn, "torch_npu.npu": npu_module, "torch_npu.npu.amp": npu_module.amp,
            "torch_npu.contrib": contrib, "torch_npu.optim": optim, "torch_npu.utils": utils,
            "torch_npu.version": version}


class Finder(importlib.abc.MetaPathFinder):
    """Finds torch_npu (and submodules) before the emulator is installed; wraps ``import torch`` when the
    release autoloads torch_npu."""

    def __init__(self, install: Callable[[], None], autoload: bool):
        self.loader = _Loader(install)
        self.install = install
        self.autoload = autoload

    def find_spec(self, fullname: str, path=None, target=None) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname == "torch_npu" or fullname.startswith("torch_npu."):
            if fullname in ("torch_npu", "torch_npu.npu", "torch_npu.contrib"):
                return _spec(fullname, self.loader, True)
            if fullname in ("torch_npu.npu.amp", "torch_npu.optim", "torch_npu.utils", "torch_npu.version"):
                return _spec(fullname, self.loader, False)
            return None
        if fullname == "torch" and self.autoload:
            self.autoload = False  # once
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is None or spec.loader is None:
                return spec
            spec.loader = _AfterTorch(spec.loader, self.install)
            return spec
        return None


class _AfterTorch(importlib.abc.Loader):
    """torch's own loader, then the emulator (as torch >= 2.5 runs backend entry points at the end of
    ``torch/__init__.py``)."""

    def __init__(self, inner, install):
        self.inner, self.install = inner, install

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        self.install()

    def __getattr__(self, name):
        return getattr(self.inner, name)
