"""``--input`` specs: ``name:d0,d1,...:dtype[:lo..hi]``.

Examples: ``x:2,3,224,224:float32``, ``input_ids:2,16:int64:0..999``,
``x:2,8:float32:-1..1``, ``mask:2,16:bool``.  dtype defaults to float32; integer
tensors are drawn uniformly from ``lo..hi`` (both ends included; default ``0..99``),
floats from N(0, 1) or, with a range, uniformly from ``[lo, hi)``; bools with p = 0.5.
The value range is read by :func:`parse_value_range`, shared with ``export``'s
parser: ``lo..hi`` (canonical) or the 0.1 spelling ``low-high`` (``high`` excluded
for integers, non-negative bounds only).  Malformed specs raise :class:`SpecError`
naming the bad part.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple, Optional

DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64")


class SpecError(ValueError):
    pass


_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_DOTS = re.compile(rf"^({_NUM})\.\.({_NUM})$")
_DASH = re.compile(r"^(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$")
RANGE_FORMS = "lo..hi (e.g. 0..999, -1..1; the old low-high, e.g. 0-1000, also works)"


class ValueRange(NamedTuple):
    """A value range from ``--input``: ``lo``, ``hi`` and whether ``hi`` is included for
    integer inputs (``lo..hi``: yes; the old ``low-high``: no, as probe drew ``[low, high)``)."""

    lo: float
    hi: float
    hi_included: bool

    def int_inclusive(self) -> "tuple[int, int]":
        """Integer bounds, both included.  ``ValueError`` for non-integral or empty ranges."""
        if self.lo != int(self.lo) or self.hi != int(self.hi):
            raise ValueError("integer inputs need integer bounds")
        lo, hi = int(self.lo), int(self.hi) - (0 if self.hi_included else 1)
        if hi < lo:
            raise ValueError("the range is empty")
        return lo, hi


def parse_value_range(text: str) -> ValueRange:
    """The value-range field of every command's ``--input`` (probe, fit, export, migrate --probe).

    ``lo..hi`` is canonical (negative bounds allowed: ``-1..1``); ``low-high`` is the 0.1
    spelling, non-negative only, with ``high`` excluded for integers.  Raises ``ValueError``
    with the reason (callers prefix the option and value).
    """
    t = str(text).strip()
    m = _DOTS.match(t)
    dots = m is not None
    if m is None:
        m = _DASH.match(t)
    if m is None:
        raise ValueError(f"value range '{t}' must be {RANGE_FORMS}")
    lo, hi = float(m.group(1)), float(m.group(2))
    if hi < lo or (not dots and hi == lo):
        raise ValueError(f"value range '{t}' is empty ({'lo <= hi' if dots else 'low < high'} needed)")
    return ValueRange(lo, hi, dots)


@dataclass(frozen=True)
class InputSpec:
    name: str
    shape: tuple
    dtype: str = "float32"
    low: int = 0
    high: int = 100  # integers: drawn from [low, high)
    float_range: Optional[tuple] = None  # floats: uniform in [lo, hi) instead of N(0, 1)

    def text(self) -> str:
        return f"{self.name}:{','.join(map(str, self.shape))}:{self.dtype}"

    def with_shape(self, shape) -> "InputSpec":
        return InputSpec(self.name, tuple(shape), self.dtype, self.low, self.high, self.float_range)

    def make(self, device: str = "cpu", generator=None):
        """Build the tensor (``torch`` imported lazily)."""
        import torch
        dt = getattr(torch, self.dtype)
        if self.dtype == "bool":
            return torch.rand(self.shape, generator=generator) < 0.5
        if self.dtype.startswith(("int", "uint")):
            t = torch.randint(self.low, self.high, self.shape, generator=generator, dtype=dt)
        elif self.dtype.startswith("complex"):
            t = torch.randn(self.shape, generator=generator, dtype=dt)
        elif self.float_range is not None:
            lo, hi = self.float_range
            t = (torch.rand(self.shape, generator=generator, dtype=torch.float64) * (hi - lo) + lo).to(dt)
        else:
            t = torch.randn(self.shape, generator=generator).to(dt)
        return t.to(device) if device != "cpu" else t


def parse_spec(text: str) -> InputSpec:
    """Parse one ``--input`` value; :class:`SpecError` names the bad part."""
    raw = str(text).strip()
    parts = raw.split(":")
    if len(parts) < 2 or len(parts) > 4:
        raise SpecError(f"--input '{raw}': expected name:d0,d1,...[:dtype[:lo..hi]], e.g. x:2,3,224,224:float32")
    name = parts[0].strip()
    if not name.isidentifier():
        raise SpecError(f"--input '{raw}': name '{name}' is not a Python identifier")
    dims = []
    for d in parts[1].split(","):
        d = d.strip()
        if not d.isdigit() or int(d) <= 0:
            raise SpecError(f"--input '{raw}': dimension '{d}' is not a positive integer")
        dims.append(int(d))
    dtype = parts[2].strip() if len(parts) > 2 and parts[2].strip() else "float32"
    alias = {"float": "float32", "half": "float16", "double": "float64", "long": "int64", "int": "int32",
             "bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
    dtype = alias.get(dtype, dtype)
    if dtype not in DTYPES:
        raise SpecError(f"--input '{raw}': dtype '{dtype}' is not one of {', '.join(DTYPES)}")
    low, high, frange = 0, 100, None
    if len(parts) == 4 and parts[3].strip():
        rng = parts[3].strip()
        try:
            vr = parse_value_range(rng)
        except ValueError as exc:
            raise SpecError(f"--input '{raw}': {exc}") from None
        if dtype.startswith(("int", "uint")):
            try:
                low, hi_in = vr.int_inclusive()
            except ValueError as exc:
                raise SpecError(f"--input '{raw}': value range '{rng}': {exc}") from None
            high = hi_in + 1
        elif dtype != "bool":
            frange = (vr.lo, vr.hi)
    return InputSpec(name, tuple(dims), dtype, low, high, frange)


def vary(specs: "list[InputSpec]", how: str) -> "list[InputSpec]":
    """Second input set for ``--vary batch|spatial|seq``.

    batch: axis 0 doubled on every input; spatial: the last two axes of 4-D
    (NCHW) / the last three of 5-D inputs enlarged by 32 (×2 below 32);
    seq: axis 1 of 2-D/3-D inputs doubled (token ids, masks).  Raises
    :class:`SpecError` if nothing would change.
    """
    out = []
    changed = False
    for s in specs:
        shape = list(s.shape)
        if how == "batch":
            shape[0] *= 2
        elif how == "spatial":
            axes = range(len(shape) - 2, len(shape)) if len(shape) == 4 else range(2, len(shape)) if len(shape) == 5 else ()
            for a in axes:
                shape[a] = shape[a] + 32 if shape[a] >= 32 else shape[a] * 2
        elif how == "seq":
            if len(shape) in (2, 3):
                shape[1] *= 2
        else:
            raise SpecError(f"--vary '{how}': expected batch, spatial or seq")
        changed = changed or tuple(shape) != s.shape
        out.append(s.with_shape(shape))
    if not changed:
        raise SpecError(f"--vary {how}: no input has an axis to vary (spatial needs 4-D/5-D inputs, seq 2-D/3-D)")
    return out
