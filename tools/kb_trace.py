"""Trace which aten overloads each public torch API reaches (build-time only).

``python tools/kb_trace.py`` runs the sample inputs of PyTorch's own OpInfo
database (``torch.testing._internal.common_methods_invocations.op_db``) for
every op, float32 on the CPU, under a ``TorchDispatchMode`` and records the
aten overloads that reach the backend (CompositeImplicitAutograd ops are
already decomposed there, as on the NPU unless torch_npu overrides them).
Output: ``tools/kb_inputs/api_trace_torch<ver>.json.gz`` mapping
``torch.linalg.inv`` / ``Tensor.scatter_add_`` / ``torch.nn.functional.instance_norm``
→ sorted aten overloads.  The mapping is specific to the torch version that
ran it (recorded in the file) and is used by ``build_kb.py`` to link API
names to the per-release op tables.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "kb_inputs")

# Ops that every API touches and that say nothing about it.
NOISE = {"detach", "alias", "lift_fresh", "_to_copy", "copy_", "empty.memory_format", "empty_strided",
         "clone", "view", "_unsafe_view", "t", "expand", "as_strided", "resize_", "zeros_like",
         "empty_like", "fill_.Scalar", "lift_fresh_copy", "_local_scalar_dense", "ones_like"}


def _api_names(op) -> "list[str]":
    import torch
    name = op.name
    names = []
    for pre, mod in (("nn.functional.", "torch.nn.functional."), ("linalg.", "torch.linalg."),
                     ("special.", "torch.special."), ("fft.", "torch.fft."), ("nn.", "torch.nn.")):
        if name.startswith(pre):
            names.append(mod + name[len(pre):])
            break
    else:
        base = name.split(".")[0]
        if hasattr(torch, base) and getattr(op, "op", None) is getattr(torch, base, None):
            names.append("torch." + base)
        elif hasattr(torch, base):
            names.append("torch." + base)
        if getattr(op, "method_variant", None) is not None:
            names.append("Tensor." + base)
        if getattr(op, "inplace_variant", None) is not None:
            names.append("Tensor." + base + "_")
    for a in getattr(op, "aliases", ()) or ():
        an = getattr(a, "name", "")
        if an:
            names.append("torch." + an)
    return names


def trace(max_samples: int = 3, time_budget: float = 240.0) -> dict:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
    from ascendify.probe.recorder import OpRecorder

    def has_cea(op: str) -> bool:
        name = "aten::" + op
        try:
            return torch._C._dispatch_has_kernel_for_dispatch_key(name, "CompositeExplicitAutograd")
        except Exception:  # noqa: BLE001
            return False

    class Rec(OpRecorder):
        def __init__(self):
            super().__init__(reenter=has_cea, tag_autograd=False, track_api=False)

        @property
        def ops(self):
            return set(self.records)

    apis: dict = {}
    t0 = time.time()
    skipped = 0
    for op in op_db:
        if time.time() - t0 > time_budget:
            skipped += 1
            continue
        if torch.float32 not in op.supported_dtypes("cpu"):
            continue
        try:
            samples = list(op.sample_inputs("cpu", torch.float32, requires_grad=False))[:max_samples]
        except Exception:
            continue
        variants = [(n, op.op) for n in _api_names(op) if not n.startswith("Tensor.")]
        if op.method_variant is not None:
            variants.append(("Tensor." + op.name.split(".")[0], op.method_variant))
        if op.inplace_variant is not None:
            variants.append(("Tensor." + op.name.split(".")[0] + "_", op.inplace_variant))
        for api, fn in variants:
            seen = set()
            for s in samples:
                rec = Rec()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        inp = s.input.clone() if api.endswith("_") and isinstance(s.input, torch.Tensor) else s.input
                        with rec:
                            fn(inp, *s.args, **s.kwargs)
                except Exception:
                    pass
                seen |= rec.ops
            seen -= NOISE
            if seen:
                apis.setdefault(api, set()).update(seen)
    return {"schema": 1, "torch": torch.__version__.split("+")[0],
            "method": "OpInfo sample inputs (float32, CPU, first %d per op) under TorchDispatchMode, entering device-generic kernels" % max_samples,
            "source": {"package": "torch", "version": torch.__version__,
                       "file": "torch/testing/_internal/common_methods_invocations.py (op_db)", "licence": "BSD-3-Clause"},
            "skipped_for_time": skipped,
            "apis": {k: sorted(v) for k, v in sorted(apis.items())}}


if __name__ == "__main__":
    doc = trace()
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, f"api_trace_torch{doc['torch']}.json.gz")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as fh:
        fh.write(json.dumps(doc, separators=(",", ":")).encode("utf-8"))
    with open(path, "wb") as fh:
        fh.write(buf.getvalue())
    print(path, len(doc["apis"]), "APIs", "skipped", doc["skipped_for_time"])
