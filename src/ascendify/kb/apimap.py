"""Per-release API-level verdicts used by the OPS scan rules and the probe.

:func:`api_fallbacks` answers "does calling public API X fall back to the CPU
under torch_npu release R?" from the KB: the API's own aten op (name-based:
``torch.linalg.inv`` → ``linalg_inv``), the aten ops it reached when traced
(:mod:`ascendify.kb.apis`), and the release's op table.  To keep false
positives down an API is flagged only when the fallback op is the API's own
op or a traced op whose name contains the API's name (``linalg_inv`` →
``linalg_inv_ex``, ``lstsq`` → ``linalg_lstsq.out`` inside the device-generic
kernel) — not for every op any sample input of a multi-mode API reached.
Overloads that only some arguments select are returned with the keyword that
selects them (``scatter.reduce`` needs ``reduce=``).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ascendify.kb import apis as kbapis
from ascendify.kb import ops as kbops


_PUBLIC = re.compile(r"^(Tensor\.\w+|torch\.(linalg\.|special\.|fft\.|nn\.functional\.)?\w+)$")

#: overload name fragment → keyword argument that selects it
SELECTING_KWARG = {"reduce": "reduce", "value_reduce": "reduce"}


def needs_kwarg(overload: str) -> "str | None":
    """``"scatter.reduce"`` → ``"reduce"``: the keyword a call must pass to reach it."""
    ov = overload.split(".", 1)[1] if "." in overload else ""
    return SELECTING_KWARG.get(ov)


def _stem(api: str) -> str:
    last = kbapis.normalize_api(api).split(".")[-1].strip("_")
    return last


@lru_cache(maxsize=16)
def api_fallbacks(release: str) -> "dict[str, tuple]":
    """API name → tuple of cpu_fallback aten overloads it dispatches to under ``release``
    (an exact KB release).  Built once per release (a few ms)."""
    table = kbops.load_release(release)
    notes = kbapis._notes()
    names = set(notes.get("aten", {})) | set(notes["apis"])
    out: dict = {}
    for api in names:
        if not _PUBLIC.match(api):
            continue
        own = kbapis.name_based_aten(api)
        hits = []
        r = table.ops.get(own)
        if r and r[0] == "cpu_fallback":
            hits.append(own)
        stem = _stem(api)
        for op in notes.get("aten", {}).get(api, ()):
            rr = table.ops.get(op)
            if rr and rr[0] == "cpu_fallback" and len(stem) >= 2 and stem in op and op not in hits:
                hits.append(op)
        if hits:
            out[api] = tuple(hits)
    return out
