"""``--input`` specs: ``name:d0,d1,...:dtype[:low-high]``.

Examples: ``x:2,3,224,224:float32``, ``input_ids:2,16:int64:0-1000``,
``mask:2,16:bool``.  dtype defaults to float32; integer tensors are drawn
uniformly from ``[low, high)`` (default ``0-100``), floats from N(0, 1),
bools with p = 0.5.  Malformed specs raise :class:`SpecError` naming the bad part.
"""

from __future__ import annotations

from dataclasses import dataclass

DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64")


class SpecError(ValueError):
    pass


@dataclass(frozen=True)
class InputSpec:
    name: str
    shape: tuple
    dtype: str = "float32"
    low: int = 0
    high: int = 100

    def text(self) -> str:
        return f"{self.name}:{','.join(map(str, self.shape))}:{self.dtype}"

    def with_shape(self, shape) -> "InputSpec":
        return InputSpec(self.name, tuple(shape), self.dtype, self.low, self.high)

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
        else:
            t = torch.randn(self.shape, generator=generator).to(dt)
        return t.to(device) if device != "cpu" else t


def parse_spec(text: str) -> InputSpec:
    """Parse one ``--input`` value; :class:`SpecError` names the bad part."""
    raw = str(text).strip()
    parts = raw.split(":")
    if len(parts) < 2 or len(parts) > 4:
        raise SpecError(f"--input '{raw}': expected name:d0,d1,...[:dtype[:low-high]], e.g. x:2,3,224,224:float32")
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
    low, high = 0, 100
    if len(parts) == 4:
        rng = parts[3].strip()
        try:
            lo, hi = rng.split("-")
            low, high = int(lo), int(hi)
        except ValueError:
            raise SpecError(f"--input '{raw}': range '{rng}' is not low-high (e.g. 0-1000)") from None
        if high <= low:
            raise SpecError(f"--input '{raw}': range '{rng}' is empty")
    return InputSpec(name, tuple(dims), dtype, low, high)


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
