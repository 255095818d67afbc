"""Dtype spellings → canonical torch names (``float32``, ``bfloat16`` …).

Accepts torch (``torch.float64``, ``double``, ``half``, ``cfloat``), CANN /
profiler (``FLOAT``, ``DT_BF16``, ``FLOAT16``, ``DOUBLE``, ``COMPLEX64``) and
mstt (``float``, ``dt_bf16``) spellings.  Unknown tokens are returned lower-cased.
"""

from __future__ import annotations

_ALIASES = {
    "float": "float32", "fp32": "float32", "dt_float": "float32", "float32": "float32",
    "half": "float16", "fp16": "float16", "dt_float16": "float16", "float16": "float16",
    "bf16": "bfloat16", "dt_bf16": "bfloat16", "bfloat16": "bfloat16", "dt_bfloat16": "bfloat16",
    "double": "float64", "fp64": "float64", "dt_double": "float64", "float64": "float64",
    "cfloat": "complex64", "complex64": "complex64", "dt_complex64": "complex64",
    "cdouble": "complex128", "complex128": "complex128", "dt_complex128": "complex128",
    "chalf": "complex32", "complex32": "complex32",
    "long": "int64", "int": "int32", "short": "int16", "char": "int8", "byte": "uint8",
    "boolean": "bool", "dt_bool": "bool",
}

FLOAT64 = frozenset({"float64"})
COMPLEX = frozenset({"complex32", "complex64", "complex128"})


def canon_dtype(tok: str) -> str:
    """Return the canonical torch dtype name for one spelling (``"DT_BF16"`` → ``"bfloat16"``)."""
    t = str(tok).strip().lower()
    if t.startswith("torch."):
        t = t[6:]
    if t in _ALIASES:
        return _ALIASES[t]
    if t.startswith("dt_"):
        t = t[3:]
    return _ALIASES.get(t, t)


def split_dtypes(values) -> list:
    """Canonical dtypes from an iterable of strings; ``"FLOAT;INT64"`` cells are split,
    ``N/A``/``UNDEFINED``/empty dropped."""
    out = []
    for v in values or ():
        for part in str(v).replace(",", ";").split(";"):
            p = part.strip().strip('"')
            if not p or p.upper() in ("N/A", "UNDEFINED", "NONE", "DT_UNDEFINED"):
                continue
            out.append(canon_dtype(p))
    return out
