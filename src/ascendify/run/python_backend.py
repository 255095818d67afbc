"""Mode "python" (no C++ compiler): an npu tensor is a ``__torch_dispatch__`` wrapper subclass on device
PrivateUse1 that holds a CPU tensor (``_elem``).  Same KB policy, amp, hccl and torch.npu code as mode
"shim"; what it cannot do is in ``boot.limits("python")``.

C++ sees every npu tensor on npu:0 (torch's Python device guard knows one device); the index the program
sees (``t.device``) is kept in ``_idx``.  Factories reach the PrivateUse1 kernels registered here.
"""

from __future__ import annotations

import collections
import functools
import threading
import warnings
import weakref
from typing import Any, Dict

import torch

from ascendify.run import common, device as D, policy

aten = torch.ops.aten
_CPU = torch.device("cpu")
_BAD = common.BAD_DTYPES
_tls = threading.local()
_libs: list = []


class _Mem:
    """Bytes of live npu storages per device (a storage counts once, however many tensors view it)."""

    def __init__(self, n: int):
        self.alloc = [0] * n
        self.peak = [0] * n
        self.nallocs = [0] * n
        self.live: Dict[int, list] = {}   # storage ptr -> [nbytes, refs, idx]
        self.lock = threading.Lock()

    def track(self, ptr: int, nbytes: int, idx: int) -> None:
        if not nbytes:
            return
        with self.lock:
            e = self.live.get(ptr)
            if e is not None:
                e[1] += 1
                return
            if self.alloc[idx] + nbytes > D.S.capacity:
                raise torch.OutOfMemoryError(
                    f"NPU out of memory. Tried to allocate {nbytes / 2**20:.2f} MiB (NPU {idx}; "
                    f"{D.S.capacity / 2**30:.2f} GiB total capacity) [emulated by ascendify run]")
            self.live[ptr] = [nbytes, 1, idx]
            self.alloc[idx] += nbytes
            self.nallocs[idx] += 1
            if self.alloc[idx] > self.peak[idx]:
                self.peak[idx] = self.alloc[idx]

    def release(self, ptr: int) -> None:
        with self.lock:
            e = self.live.get(ptr)
            if e is None:
                return
            e[1] -= 1
            if e[1] <= 0:
                del self.live[ptr]
                self.alloc[e[2]] -= e[0]


MEM: _Mem = _Mem(1)
_DEV0 = None


class NPUTensor(torch.Tensor):
    _elem: torch.Tensor
    _idx: int
    __torch_function__ = torch._C._disabled_torch_function_impl

    @staticmethod
    def __new__(cls, elem, idx):
        if elem.layout is not torch.strided:
            raise RuntimeError(f"Could not run an operator producing a {elem.layout} tensor on the 'npu' backend "
                               "(torch_npu has no sparse kernels for it)")
        r = torch.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(),
                                                storage_offset=elem.storage_offset(), dtype=elem.dtype,
                                                layout=elem.layout, device=_DEV0, requires_grad=False)
        r._elem = elem
        r._idx = idx
        st = elem.untyped_storage()
        r._ptr = st.data_ptr()
        MEM.track(r._ptr, st.nbytes(), idx)
        return r

    def __del__(self):
        try:
            MEM.release(self._ptr)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # traceable wrapper subclass: Module._apply swaps parameters in place, so tied weights stay tied
    def __tensor_flatten__(self):
        return ["_elem"], (self._idx,)

    @staticmethod
    def __tensor_unflatten__(inner, ctx, outer_size, outer_stride):
        return NPUTensor(inner["_elem"], ctx[0])

    @property
    def device(self):
        return torch.device("npu", self._idx)

    def get_device(self):
        return self._idx

    @property
    def is_cpu(self):
        return False

    @property
    def is_npu(self):
        return True

    def data_ptr(self):
        return self._elem.data_ptr()

    def untyped_storage(self):
        return self._elem.untyped_storage()

    def numpy(self, *, force=False):
        raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                        "tensor to host memory first.")

    def tolist(self):
        return self.cpu().tolist()

    def __format__(self, format_spec):
        if self.dim() == 0:
            return self.item().__format__(format_spec)
        return super().__format__(format_spec)

    def __reduce_ex__(self, proto):
        # pickled like torch_npu's tensors: a plain tensor whose storage is tagged "npu:<idx>"
        e = self._elem
        _TAGGED[e.untyped_storage().data_ptr()] = self._idx
        return (torch._utils._rebuild_tensor_v2,
                (e._typed_storage(), e.storage_offset(), tuple(e.size()), e.stride(), self.requires_grad,
                 collections.OrderedDict()))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        import copy

        with torch.no_grad():
            new = NPUTensor(copy.deepcopy(self._elem, memo), self._idx)
        new.requires_grad_(self.requires_grad)
        memo[id(self)] = new
        return new

    def __repr__(self, *, tensor_contents=None):
        policy.S.quiet += 1
        try:
            s = super().__repr__(tensor_contents=tensor_contents)
        finally:
            policy.S.quiet -= 1
        return s.replace("NPUTensor(", "tensor(", 1).replace("\n" + " " * 10, "\n" + " " * 7)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        sp = _SPECIAL.get(func)
        if sp is not None:
            return sp(func, args, kwargs or {})
        return run(func, args, kwargs or {})


def _unwrap(a, st):
    if isinstance(a, NPUTensor):
        i = a._idx
        if i != st[0]:
            if st[0] != -1:
                raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                                   f"npu:{st[0]} and npu:{i}!")
            st[0] = i
        if a._elem.dtype in _BAD:
            st[2] = a._elem.dtype
        st[3].append((a._elem, a))
        return a._elem
    if isinstance(a, torch.Tensor):
        if a.dim() != 0:
            st[1] = True
        return a
    if (type(a) is list or type(a) is tuple) and a:
        return type(a)(_unwrap(x, st) for x in a)
    return a


_INFO: Dict[Any, tuple] = {}
_CPU_OK: frozenset = frozenset()
_LOCAL_SCALAR = None


def _info(func) -> tuple:
    inf = _INFO.get(func)
    if inf is None:
        args = func._schema.arguments
        has_gen = any(a.name == "generator" for a in args)
        dev_rng = not has_gen and func._schema.name.split("::")[-1] in common.NO_GENERATOR_RANDOM
        inf = _INFO[func] = (has_gen, dev_rng)
    return inf


def run(func, args, kwargs):
    pol = policy.policy(func)
    pol.n += 1
    st = [-1, False, None, []]   # idx, cpu tensor seen, bad dtype, (elem, wrapper) pairs
    uargs = [_unwrap(a, st) for a in args]
    ukw = {k: _unwrap(v, st) for k, v in kwargs.items()} if kwargs else {}
    idx = st[0]
    if idx == -1:
        idx = current()
    elif st[1] and func not in _CPU_OK:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"npu:{idx} and cpu! (when checking argument for argument in method "
                           f"wrapper_NPU__{func._schema.name.split('::')[-1]})")
    if pol.action == policy.FALLBACK:
        policy.on_fallback(pol, st[2])
    elif st[2] is not None and pol.check_dtype:
        policy.on_dtype(pol, st[2])
    if func is _LOCAL_SCALAR:
        common.host_sync()
    has_gen, dev_rng = _INFO.get(func) or _info(func)
    if has_gen and ukw.get("generator") is None:
        ukw["generator"] = D.S.gens[idx]
    if dev_rng:
        out = common.with_device_rng(func, idx, lambda: func(*uargs, **ukw))
    else:
        out = func(*uargs, **ukw)
    return _wrap(out, idx, st[3], func)


def _wrap(out, idx, pairs, func):
    if isinstance(out, torch.Tensor):
        for e, w in pairs:
            if out is e:
                if w.shape != e.shape:
                    raise NotImplementedError(f"{func} resized an npu tensor in place (resize_/out=): not supported "
                                              "by ascendify run's pure-Python mode (mode 'shim' supports it)")
                return w
        if out.device.type != "cpu":
            return out
        return NPUTensor(out, idx)
    if isinstance(out, (tuple, list)):
        return type(out)(_wrap(o, idx, pairs, func) for o in out)
    return out


def current() -> int:
    i = getattr(_tls, "idx", None)
    return D.S.backend.current_device() if i is None else i


def _logical(dev) -> int:
    """Device index for a device argument seen by C++ (which passes npu:0 for 'this npu')."""
    if dev is None:
        return current()
    if isinstance(dev, str):
        dev = torch.device(dev)
    i = dev if isinstance(dev, int) else dev.index
    if i is None or i == 0:
        return current()
    return D.check_index(i)


# ---------------------------------------------------------------------------------------------- special ops
def _to_copy(func, args, kwargs):
    x = args[0]
    kw = dict(kwargs)
    dev = kw.pop("device", None)
    kw.pop("pin_memory", None)
    policy.policy(func).n += 1
    if isinstance(x, NPUTensor):
        out = aten._to_copy.default(x._elem, **kw)
        if dev is not None and torch.device(dev).type == "cpu":
            return out
        return NPUTensor(out, x._idx if dev is None else _logical(dev))
    return NPUTensor(aten._to_copy.default(x, **kw), _logical(dev))


def _copy_(func, args, kwargs):
    dst, src = args[0], args[1]
    policy.policy(func).n += 1
    if isinstance(dst, NPUTensor):
        dst._elem.copy_(src._elem if isinstance(src, NPUTensor) else src)
        return dst
    dst.copy_(src._elem)
    return dst


def _none(func, args, kwargs):
    return None


def _false(func, args, kwargs):
    return False


def _resize_(func, args, kwargs):
    x, size = args[0], args[1]
    if isinstance(x, NPUTensor) and tuple(x.shape) == tuple(size):
        return x
    raise NotImplementedError("resize_ of an npu tensor is not supported by ascendify run's pure-Python mode "
                              "(mode 'shim' supports it)")


def _shape_inplace(func, args, kwargs):
    raise NotImplementedError(f"{func} changes the shape of an npu tensor in place: not supported by ascendify "
                              "run's pure-Python mode (use the out-of-place op, or mode 'shim')")


_SPECIAL: Dict[Any, Any] = {}


def _build_special() -> None:
    _SPECIAL.update({aten._to_copy.default: _to_copy, aten.copy_.default: _copy_,
                     aten.record_stream.default: _none, aten.is_pinned.default: _false,
                     aten.resize_.default: _resize_})
    for n in ("squeeze_", "unsqueeze_", "t_", "transpose_", "as_strided_", "swapdims_", "swapaxes_", "resize_as_"):
        pkt = getattr(aten, n, None)
        for ov in (pkt.overloads() if pkt is not None else ()):
            _SPECIAL[getattr(pkt, ov)] = _shape_inplace
    for ov in aten.set_.overloads():
        _SPECIAL[getattr(aten.set_, ov)] = _shape_inplace


# ---------------------------------------------------------------------------------------------- factories
FACTORIES = ["empty.memory_format", "empty_strided", "empty_permuted", "zeros", "ones", "full", "arange",
             "arange.start", "arange.start_step", "range", "range.step", "linspace", "logspace", "eye", "eye.m",
             "rand", "rand.generator", "randn", "randn.generator", "randint", "randint.generator", "randint.low",
             "randint.low_generator", "randperm", "randperm.generator", "scalar_tensor", "tril_indices",
             "triu_indices", "_efficientzerotensor", "normal.float_float", "bartlett_window", "hann_window",
             "hann_window.periodic", "hamming_window", "blackman_window", "kaiser_window"]


def _factory(op):
    has_gen = any(a.name == "generator" for a in op._schema.arguments)
    dev_rng = not has_gen and op._schema.name.split("::")[-1] in common.NO_GENERATOR_RANDOM
    pol = policy.policy(op)

    def kernel(*args, **kwargs):
        idx = _logical(kwargs.get("device"))
        kwargs["device"] = _CPU
        if kwargs.get("pin_memory"):
            kwargs["pin_memory"] = False
        if has_gen and kwargs.get("generator") is None:
            kwargs["generator"] = D.S.gens[idx]
        pol.n += 1
        dt = kwargs.get("dtype")
        if dt in _BAD:
            policy.on_dtype(pol, dt)
        with torch._C._DisableTorchDispatch():
            out = common.with_device_rng(op, idx, lambda: op(*args, **kwargs)) if dev_rng else op(*args, **kwargs)
        return NPUTensor(out, idx)

    return kernel


def _fallback(op, *args, **kwargs):
    dev = kwargs.get("device")
    if dev is not None:
        idx = _logical(dev)
        kwargs = dict(kwargs, device=_CPU)
        with torch._C._DisableTorchDispatch():
            out = op(*args, **kwargs)
        return _wrap(out, idx, [], op)
    # a non-aten op with no npu kernel reached PrivateUse1 with npu tensors: torch_npu's CPU fallback
    return run(op, args, kwargs)


# ---------------------------------------------------------------------------------------------- the backend
class PythonBackend(D.Backend):
    def __init__(self):
        self.cur = 0

    def current_device(self) -> int:
        return self.cur

    def set_device(self, idx: int) -> None:
        self.cur = idx

    def mem_stats(self, idx: int):
        return (MEM.alloc[idx], MEM.peak[idx], MEM.nallocs[idx], 0)

    def reset_peak(self, idx: int) -> None:
        MEM.peak[idx] = MEM.alloc[idx]


_TAGGED: Dict[int, int] = {}      # data_ptr of a CPU storage being saved -> npu index
_RESTORED: Dict[int, int] = {}    # data_ptr of a CPU storage loaded for an "npu:N" location -> N
_PINNED: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()


def _tag(storage):
    i = _TAGGED.get(storage.data_ptr()) if _TAGGED else None
    return None if i is None else f"npu:{i}"


def _restore(storage, location):
    if location == "npu" or location.startswith("npu:"):
        _RESTORED[storage.data_ptr()] = D.index_of(location)
        return storage
    return None


def _patch_python_apis() -> None:
    # torch.accelerator: torch's Python device guard has one device; answer from torch.npu
    acc = torch.accelerator
    acc.device_count = lambda: D.S.count
    acc.current_device_index = acc.current_device_idx = lambda: D.S.backend.current_device()
    acc.set_device_index = acc.set_device_idx = lambda device: D.S.backend.set_device(
        D.S.backend.current_device() if device is None or device == -1 else D.index_of(device))
    acc.synchronize = lambda device=None: None
    npu = torch.npu
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
                 "reset_peak_memory_stats", "empty_cache", "memory_stats"):
        setattr(acc, name, getattr(npu, name))
        if hasattr(acc, "memory"):
            setattr(acc.memory, name, getattr(npu, name))

    def pin_memory(self, device=None):
        if isinstance(self, NPUTensor):
            raise RuntimeError("cannot pin 'torch.npu.FloatTensor' only dense CPU tensors can be pinned")
        t = self.clone()
        _PINNED[id(t)] = t
        return t

    torch.Tensor.pin_memory = pin_memory
    torch.Tensor.is_pinned = lambda self, device=None: (not isinstance(self, NPUTensor)) and _PINNED.get(id(self)) is self
    torch.Tensor.is_npu = property(lambda self: isinstance(self, NPUTensor))
    torch.serialization.register_package(5, _tag, _restore)
    orig_rebuild = torch._utils._rebuild_tensor_v2

    @functools.wraps(orig_rebuild)
    def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
        t = orig_rebuild(storage, storage_offset, size, stride, False, backward_hooks, metadata)
        idx = _RESTORED.get(t.untyped_storage().data_ptr()) if _RESTORED else None
        if idx is not None:
            t = NPUTensor(t, idx)
        t.requires_grad = requires_grad
        return t

    torch._utils._rebuild_tensor_v2 = _rebuild_tensor_v2
    def clearing(fn, table):
        """``fn`` that empties ``table`` (the storages of one load / save) when it returns."""
        @functools.wraps(fn)
        def wrapper(*a, **k):
            try:
                return fn(*a, **k)
            finally:
                table.clear()
        return wrapper

    torch.load, torch.save = clearing(torch.load, _RESTORED), clearing(torch.save, _TAGGED)
    import torch.optim.optimizer as oo
    import torch.utils._foreach_utils as fu

    for lst in (oo._foreach_supported_types, fu._foreach_supported_types):
        if NPUTensor not in lst:
            lst.append(NPUTensor)


def install(release, count: int, capacity: int) -> int:
    global MEM, _DEV0, _CPU_OK, _LOCAL_SCALAR
    acc = getattr(torch._C, "_acc", None)
    if acc is None:
        from ascendify.errors import AscendifyError

        raise AscendifyError("ascendify run: mode 'python' needs torch._C._acc (torch's Python device guard); "
                             "this torch lacks it")
    from torch.utils.backend_registration import _DummyDeviceGuard, _DummyPrivateUse1Hook

    acc.register_python_privateuseone_hook(_DummyPrivateUse1Hook())
    acc.register_python_privateuseone_device_guard(_DummyDeviceGuard())
    MEM = _Mem(count)
    _DEV0 = torch.device("npu", 0)
    _CPU_OK = common.op_set(common.CPU_OK_NAMES)
    _LOCAL_SCALAR = aten._local_scalar_dense.default
    _build_special()
    common.Ops.is_npu = lambda t: isinstance(t, NPUTensor)
    common.Ops.to_cpu = lambda t: t._elem
    common.Ops.from_cpu = NPUTensor
    common.Ops.idx_of = lambda t: t._idx
    lib = torch.library.Library("aten", "IMPL")
    _libs.append(lib)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in FACTORIES:
            op = common.overload(name)
            if op is not None:
                lib.impl(name, _factory(op), "PrivateUse1")
    fb = torch.library.Library("_", "IMPL")
    _libs.append(fb)
    fb.fallback(_fallback, "PrivateUse1")
    _after_module.append(_patch_python_apis)
    return len(FACTORIES)


_after_module: list = []


def after_module() -> None:
    """Patches that need torch.npu registered (called by boot after the device module exists)."""
    for fn in _after_module:
        fn()
