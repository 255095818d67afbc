"""Readers for output tensors: .npz, .npy (files or folders), raw .bin, safetensors, .pt.

Every reader returns :class:`TensorRef` objects that know shape and dtype and
read their data lazily, in flat chunks, so comparing never holds more than a
chunk of each side in memory.  ``.npy``, ``.bin`` and uncompressed ``.npz``
members are memory-mapped in windows of :data:`MAP_WINDOW` bytes and yielded
as read-only views (no copy; a second pass over a file costs no re-read
through ``read()``, and inside :func:`keep_mapped` not even the page faults); compressed ``.npz`` members are streamed from the zip;
safetensors are sliced on the first axis.

``.pt`` files are loaded with ``torch.load(weights_only=True)`` only: a file that
needs general unpickling is refused (unpickling can run arbitrary code).

Raw ``.bin`` files (as written by ais_bench / msit benchmark for .om outputs) have
no header: their dtype and shape come from, in order, a sidecar JSON
(``NAME.bin.json`` or ``NAME.json`` with ``{"shape": [...], "dtype": "float32"}``),
the ``bin_spec`` given on the command line, or the paired baseline tensor.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import struct
import threading
import zipfile
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

import numpy as np

from ascendify.errors import AscendifyError

TENSOR_EXTS = (".npy", ".npz", ".bin", ".safetensors", ".pt", ".pth")
META_KEY = "__ascendify__"
DEFAULT_CHUNK = 1 << 16  # elements (512 KiB in float64: the compare scratch buffers stay in L2)
MAP_WINDOW = 1 << 22  # bytes of a file mapped at a time (bounds the mapped, resident part of a file)


@dataclass
class TensorRef:
    """A lazily read tensor.  ``key`` is its name inside the collection (``"sample/output"``
    for baselines written by ``ascendify baseline``); ``where`` names the file (and member)
    for messages; ``shape`` is ``None`` for a raw .bin whose shape is not known yet."""

    key: str
    where: str
    shape: Optional[tuple[int, ...]]
    dtype: np.dtype
    _chunks: Callable[[int], Iterator[np.ndarray]] = field(repr=False, default=None)  # type: ignore[assignment]
    raw_bin: Optional[str] = None
    nbytes_file: int = 0

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape is not None else -1

    def chunks(self, chunk: int = DEFAULT_CHUNK) -> Iterator[np.ndarray]:
        """Flat (C-order) chunks of about ``chunk`` elements (read-only views for mapped
        files: do not modify them)."""
        if self._chunks is None:
            raise AscendifyError(f"{self.where}: shape and dtype unknown; give --bin-shape/--bin-dtype or a sidecar JSON")
        return self._chunks(chunk)

    def load(self) -> np.ndarray:
        """The whole tensor (use only for small tensors)."""
        parts = list(self.chunks(1 << 30))
        arr = np.concatenate(parts) if parts else np.zeros(0, self.dtype)
        return arr.reshape(self.shape)

    def resolve_bin(self, shape: tuple[int, ...], dtype: Any) -> None:
        """Fix the shape/dtype of a raw .bin; raises ``AscendifyError`` when the file size
        does not equal ``prod(shape) * itemsize``."""
        dt = np.dtype(dtype)
        need = int(np.prod(shape)) * dt.itemsize
        if need != self.nbytes_file:
            raise AscendifyError(
                f"{self.where}: {self.nbytes_file} bytes do not fit shape {tuple(shape)} {dt.name} "
                f"({need} bytes expected); give the right --bin-shape/--bin-dtype or sidecar JSON")
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dt
        path = self.raw_bin
        n = int(np.prod(shape))

        def gen(chunk: int) -> Iterator[np.ndarray]:
            yield from _read_mapped(path, 0, n, dt, chunk)

        self._chunks = gen


def _npy_file(path: str, key: str) -> TensorRef:
    try:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            shape, fortran, dtype = _read_header(fh, version)
            offset = fh.tell()
    except ValueError as exc:
        raise AscendifyError(f"{path}: not a readable .npy file ({exc})") from None
    except OSError as exc:
        raise AscendifyError(f"{path}: cannot read ({exc})") from None
    if dtype.hasobject:
        raise AscendifyError(f"{path}: object array needs unpickling; refused (save numeric arrays only)")
    _check_dtype(dtype, path)
    n = int(np.prod(shape))
    if os.path.getsize(path) < offset + n * dtype.itemsize:
        raise AscendifyError(f"{path}: truncated .npy ({os.path.getsize(path)} bytes, header says {tuple(shape)} {dtype})")

    def gen(chunk: int) -> Iterator[np.ndarray]:
        if fortran:
            a = np.load(path, mmap_mode="r", allow_pickle=False)
            flat = np.ascontiguousarray(a).reshape(-1)
            for i in range(0, flat.size, chunk):
                yield flat[i:i + chunk]
            return
        yield from _read_mapped(path, offset, n, dtype, chunk)

    return TensorRef(key, path, tuple(shape), dtype, gen)


def _read_raw(path: str, offset: int, n: int, dtype: np.dtype, chunk: int) -> Iterator[np.ndarray]:
    """Stream ``n`` elements of ``dtype`` from ``offset`` with buffered reads (bounded memory;
    the yielded arrays are fresh, so callers may keep or modify them)."""
    with open(path, "rb", buffering=0) as fh:
        fh.seek(offset)
        done = 0
        while done < n:
            k = min(chunk, n - done)
            buf = np.empty(k, dtype=dtype)
            got = fh.readinto(memoryview(buf).cast("B"))
            if got != k * dtype.itemsize:
                raise AscendifyError(f"{path}: file ended early (read {done + got // dtype.itemsize} of {n} elements)")
            yield buf
            done += k


#: inside :func:`keep_mapped`, a file's data up to this many bytes is mapped whole, once
KEEP_MAPPED = 1 << 28
_kept = threading.local()


@contextlib.contextmanager
def keep_mapped() -> Iterator[None]:
    """Within (per thread): a memory-mapped tensor of at most :data:`KEEP_MAPPED` bytes is
    mapped whole on its first read and the same map serves its later reads, so compare's
    data pass does not fault in again every page its range pass mapped (on 2 GB of
    float32: ~0.15 s CPU per pass).  Resident mapped pages are bounded by the largest
    pair kept, not by :data:`MAP_WINDOW`; the maps are dropped on exit."""
    prev = getattr(_kept, "maps", None)
    _kept.maps = {}
    try:
        yield
    finally:
        _kept.maps = prev


def _read_mapped(path: str, offset: int, n: int, dtype: np.dtype, chunk: int) -> Iterator[np.ndarray]:
    """Stream ``n`` elements of ``dtype`` from byte ``offset`` as read-only views of a memory
    map, :data:`MAP_WINDOW` bytes mapped at a time (a window is unmapped when its last view
    is gone).  No copy is made: reading a file twice (compare's range pass, then its data
    pass) costs page-table work, not a second parse or memcpy.  Falls back to buffered
    reads where the file cannot be mapped."""
    if n == 0:
        return
    try:
        fh = open(path, "rb")  # noqa: SIM115  (closed by the with below; open errors get their own message)
    except OSError as exc:
        raise AscendifyError(f"{path}: cannot read ({exc})") from None
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if size < offset + n * dtype.itemsize:
            raise AscendifyError(f"{path}: file ended early ({size} bytes, {offset + n * dtype.itemsize} needed)")
        per_window = max(chunk, MAP_WINDOW // dtype.itemsize // chunk * chunk)
        kept = getattr(_kept, "maps", None)
        if kept is not None and n * dtype.itemsize <= KEEP_MAPPED:
            key = (path, offset, n, dtype.str)
            win = kept.get(key)
            if win is None:
                base = offset - offset % mmap.ALLOCATIONGRANULARITY
                try:
                    mm = mmap.mmap(fh.fileno(), offset - base + n * dtype.itemsize, access=mmap.ACCESS_READ, offset=base)
                except (OSError, ValueError):
                    mm = None  # read in windows below
                if mm is not None:
                    win = kept[key] = np.frombuffer(mm, dtype=dtype, count=n, offset=offset - base)
                    del mm
            if win is not None:
                for i in range(0, n, chunk):
                    yield win[i:i + chunk]
                return
        done = 0
        while done < n:
            k = min(per_window, n - done)
            start = offset + done * dtype.itemsize
            base = start - start % mmap.ALLOCATIONGRANULARITY
            try:
                mm = mmap.mmap(fh.fileno(), start - base + k * dtype.itemsize, access=mmap.ACCESS_READ, offset=base)
            except (OSError, ValueError):
                if done:
                    raise AscendifyError(f"{path}: cannot map the file ({offset + done * dtype.itemsize} bytes in)") from None
                yield from _read_raw(path, offset, n, dtype, chunk)
                return
            win = np.frombuffer(mm, dtype=dtype, count=k, offset=start - base)
            del mm  # the views keep the map alive; it is unmapped when the last one is gone
            for i in range(0, k, chunk):
                yield win[i:i + chunk]
            del win
            done += k


def _check_dtype(dtype: np.dtype, where: str) -> None:
    if dtype.kind not in "biuf":
        raise AscendifyError(f"{where}: dtype {dtype} is not a real numeric type; only bool/int/uint/float tensors can be compared")


def _npz_members(path: str) -> tuple[list[TensorRef], Optional[dict]]:
    refs: list[TensorRef] = []
    meta = None
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise AscendifyError(f"{path}: not a readable .npz file ({exc})") from None
    with zf:
        for info in zf.infolist():
            name = info.filename
            if not name.endswith(".npy"):
                continue
            key = name[:-4]
            with zf.open(info) as fh:
                try:
                    version = np.lib.format.read_magic(fh)
                    shape, fortran, dtype = _read_header(fh, version)
                except ValueError as exc:
                    raise AscendifyError(f"{path}[{key}]: bad .npy header ({exc})") from None
            if key == META_KEY:
                with zf.open(info) as fh:
                    arr = np.lib.format.read_array(fh, allow_pickle=False)
                try:
                    meta = json.loads(arr.tobytes().decode("utf-8"))
                except ValueError:
                    meta = None
                continue
            if dtype.hasobject:
                raise AscendifyError(f"{path}[{key}]: object array needs unpickling; refused (save numeric arrays only)")
            _check_dtype(dtype, f"{path}[{key}]")
            at = None if fortran else _stored_member_data(info, path, int(np.prod(shape)) * dtype.itemsize)
            refs.append(TensorRef(key, f"{path}[{key}]", shape, dtype, _npz_gen(path, name, shape, fortran, dtype, at)))
    return refs, meta


def _read_header(fh: Any, version: tuple[int, int]) -> tuple[tuple[int, ...], bool, np.dtype]:
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(fh)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(fh)
    hdr = np.lib.format._read_array_header(fh, version)  # type: ignore[attr-defined]  # 3.0 headers
    return hdr


def _stored_member_data(info: zipfile.ZipInfo, path: str, nbytes: int) -> Optional[int]:
    """Byte offset in ``path`` of the ``nbytes`` of array data of an uncompressed (stored),
    unencrypted .npz member, or ``None`` when it cannot be read in place (the member is
    then streamed from the zip)."""
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1 or info.compress_size != info.file_size:
        return None
    try:
        with open(path, "rb") as fh:
            fh.seek(info.header_offset)
            head = fh.read(30)
            if len(head) != 30 or head[:4] != b"PK\x03\x04":
                return None
            name_len, extra_len = struct.unpack("<HH", head[26:30])
            start = info.header_offset + 30 + name_len + extra_len
            fh.seek(start)
            version = np.lib.format.read_magic(fh)
            _read_header(fh, version)
            data = fh.tell()
    except (OSError, ValueError):
        return None
    if data + nbytes > start + info.file_size:
        return None
    return data


def _npz_gen(path: str, member: str, shape: tuple, fortran: bool, dtype: np.dtype,
             data_at: Optional[int] = None) -> Callable[[int], Iterator[np.ndarray]]:
    n = int(np.prod(shape))

    def gen(chunk: int) -> Iterator[np.ndarray]:
        if data_at is not None:  # stored member: read in place, like a .npy
            yield from _read_mapped(path, data_at, n, dtype, chunk)
            return
        with zipfile.ZipFile(path) as zf, zf.open(member) as fh:
            version = np.lib.format.read_magic(fh)
            _read_header(fh, version)
            if fortran:
                data = np.frombuffer(fh.read(n * dtype.itemsize), dtype=dtype).reshape(shape[::-1]).T
                flat = np.ascontiguousarray(data).reshape(-1)
                for i in range(0, n, chunk):
                    yield flat[i:i + chunk]
                return
            done = 0
            while done < n:
                k = min(chunk, n - done)
                buf = fh.read(k * dtype.itemsize)
                if len(buf) != k * dtype.itemsize:
                    raise AscendifyError(f"{path}[{member}]: truncated member")
                yield np.frombuffer(buf, dtype=dtype)
                done += k

    return gen


def _bin_file(path: str, key: str, bin_spec: Optional[dict[str, Any]]) -> TensorRef:
    size = os.path.getsize(path)
    ref = TensorRef(key, path, None, np.dtype("float32"), None, raw_bin=path, nbytes_file=size)  # type: ignore[arg-type]
    side = None
    for cand in (path + ".json", os.path.splitext(path)[0] + ".json"):
        if os.path.isfile(cand):
            try:
                with open(cand, encoding="utf-8") as fh:
                    side = json.load(fh)
            except (OSError, ValueError) as exc:
                raise AscendifyError(f"{cand}: sidecar is not valid JSON ({exc})") from None
            break
    spec = None
    if isinstance(side, dict) and "shape" in side:
        spec = side
    elif bin_spec:
        spec = bin_spec.get(key) or bin_spec.get(os.path.basename(key)) or bin_spec.get("*")
    if spec is not None:
        try:
            shape = tuple(int(s) for s in spec["shape"])
            dtype = np.dtype(spec.get("dtype", "float32"))
        except (KeyError, TypeError, ValueError) as exc:
            raise AscendifyError(f"{path}: bad shape/dtype spec {spec!r} ({exc})") from None
        ref.resolve_bin(shape, dtype)
    elif bin_spec and "dtype" in bin_spec.get("*", {}):
        ref.dtype = np.dtype(bin_spec["*"]["dtype"])
    return ref


def _safetensors_file(path: str, prefix: str) -> list[TensorRef]:
    try:
        from safetensors import safe_open
    except ImportError:
        raise AscendifyError(f"{path}: reading safetensors needs the 'safetensors' package (pip install safetensors)") from None
    refs = []
    try:
        with safe_open(path, framework="numpy") as f:
            names = list(f.keys())
            for name in names:
                sl = f.get_slice(name)
                shape = tuple(sl.get_shape())
                dt = _st_dtype(sl.get_dtype(), f"{path}[{name}]")
                refs.append(TensorRef(prefix + name, f"{path}[{name}]", shape, dt, _st_gen(path, name, shape)))
    except AscendifyError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise AscendifyError(f"{path}: not a readable safetensors file ({exc})") from None
    return refs


_ST_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "I64": "int64", "I32": "int32", "I16": "int16",
              "I8": "int8", "U8": "uint8", "U16": "uint16", "U32": "uint32", "U64": "uint64", "BOOL": "bool",
              "BF16": "float32"}


def _st_dtype(code: str, where: str) -> np.dtype:
    if code not in _ST_DTYPES:
        raise AscendifyError(f"{where}: safetensors dtype {code} is not supported")
    return np.dtype(_ST_DTYPES[code])


def _st_gen(path: str, name: str, shape: tuple) -> Callable[[int], Iterator[np.ndarray]]:
    def gen(chunk: int) -> Iterator[np.ndarray]:
        from safetensors import safe_open
        fw = "numpy"
        with safe_open(path, framework="numpy") as f:
            sl = f.get_slice(name)
            if sl.get_dtype() == "BF16":
                fw = "pt"
        if fw == "pt":
            with safe_open(path, framework="pt") as f:
                t = f.get_tensor(name).float().reshape(-1).numpy()
            for i in range(0, t.size, chunk):
                yield t[i:i + chunk]
            return
        with safe_open(path, framework="numpy") as f:
            sl = f.get_slice(name)
            if not shape:
                yield np.asarray(f.get_tensor(name)).reshape(-1)
                return
            row = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            step = max(1, chunk // max(row, 1))
            for i in range(0, shape[0], step):
                yield np.asarray(sl[i:min(i + step, shape[0])]).reshape(-1)

    return gen


def _pt_file(path: str, prefix: str) -> list[TensorRef]:
    try:
        import torch
    except ImportError:
        raise AscendifyError(f"{path}: reading .pt needs torch") from None
    import pickle

    try:
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        except RuntimeError as exc:
            if "mmap" not in str(exc).lower() and "zipfile" not in str(exc).lower():
                raise
            obj = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise AscendifyError(
            f"{path}: refused: this .pt needs general unpickling, which can run arbitrary code "
            f"(torch.load weights_only=True said: {first[:160]}); re-save only tensors or dicts/lists of "
            "tensors (torch.save({'out': t})), or convert to .npz / safetensors") from None
    except Exception as exc:  # noqa: BLE001
        raise AscendifyError(f"{path}: not a readable .pt file ({type(exc).__name__}: {str(exc)[:200]})") from None
    out: list[TensorRef] = []

    def walk(o: Any, name: str) -> None:
        if isinstance(o, torch.Tensor):
            t = o.detach()
            if t.dtype == torch.bfloat16:
                t = t.float()
            if t.is_complex():
                raise AscendifyError(f"{path}[{name}]: complex tensors are not supported")
            arr = t.contiguous().numpy()
            key = prefix + name if name else (prefix.rstrip("/") or os.path.splitext(os.path.basename(path))[0])
            out.append(TensorRef(key, f"{path}[{name}]" if name else path, tuple(arr.shape), arr.dtype, _mem_gen(arr)))
        elif isinstance(o, dict):
            for k, v in o.items():
                walk(v, f"{name}/{k}" if name else str(k))
        elif isinstance(o, (list, tuple)):
            for i, v in enumerate(o):
                walk(v, f"{name}/{i}" if name else str(i))

    walk(obj, "")
    return out


def _mem_gen(arr: np.ndarray) -> Callable[[int], Iterator[np.ndarray]]:
    def gen(chunk: int) -> Iterator[np.ndarray]:
        flat = arr.reshape(-1)
        for i in range(0, flat.size, chunk):
            yield flat[i:i + chunk]

    return gen


def array_ref(key: str, arr: np.ndarray, where: str = "") -> TensorRef:
    """Wrap an in-memory array."""
    arr = np.ascontiguousarray(arr)
    return TensorRef(key, where or key, tuple(arr.shape), arr.dtype, _mem_gen(arr))


@dataclass
class Collection:
    """Named tensors from one path.  ``meta`` is the ``ascendify baseline`` record if present."""

    path: str
    refs: dict[str, TensorRef]
    meta: Optional[dict] = None


def open_collection(path: str, bin_spec: Optional[dict[str, Any]] = None) -> Collection:
    """Open ``path`` (file or folder) as a :class:`Collection`.

    Keys: member names for .npz / safetensors / .pt (nested dict keys joined by ``/``);
    for a folder, each file's path relative to it without extension (``/`` separated),
    with .npz / safetensors / .pt members appended as ``rel/member``.
    Raises ``AscendifyError`` for missing paths, unknown types, and refused files."""
    if not os.path.exists(path):
        raise AscendifyError(f"{path}: no such file or folder")
    refs: list[TensorRef] = []
    meta = None
    if os.path.isdir(path):
        files = []
        for root, dirs, names in os.walk(path):
            dirs.sort()
            for n in sorted(names):
                if n.lower().endswith(TENSOR_EXTS):
                    files.append(os.path.join(root, n))
        if not files:
            raise AscendifyError(f"{path}: folder holds no {', '.join(TENSOR_EXTS)} files")
        for f in files:
            rel = os.path.relpath(f, path).replace(os.sep, "/")
            stem = os.path.splitext(rel)[0]
            more, m = _open_file(f, stem, bin_spec, in_folder=True)
            refs.extend(more)
            meta = meta or m
    else:
        stem = os.path.splitext(os.path.basename(path))[0]
        refs, meta = _open_file(path, stem, bin_spec, in_folder=False)
    out: dict[str, TensorRef] = {}
    for r in refs:
        if r.key in out:
            raise AscendifyError(f"{path}: two tensors are both named '{r.key}' ({out[r.key].where}, {r.where})")
        out[r.key] = r
    return Collection(path, out, meta)


def _open_file(f: str, stem: str, bin_spec: Optional[dict[str, Any]], in_folder: bool) -> tuple[list[TensorRef], Optional[dict]]:
    low = f.lower()
    if low.endswith(".npy"):
        return [_npy_file(f, stem)], None
    if low.endswith(".npz"):
        refs, meta = _npz_members(f)
        if in_folder:
            for r in refs:
                r.key = f"{stem}/{r.key}"
        return refs, meta
    if low.endswith(".bin"):
        return [_bin_file(f, stem, bin_spec)], None
    if low.endswith(".safetensors"):
        return _safetensors_file(f, f"{stem}/" if in_folder else ""), None
    if low.endswith((".pt", ".pth")):
        return _pt_file(f, f"{stem}/" if in_folder else ""), None
    raise AscendifyError(f"{f}: unsupported file type; use {', '.join(TENSOR_EXTS)}")
