"""Dynamic-shape analysis: which ops' shapes change between input sets, data-dependent
ops and host syncs, and the matching ATC mode.

ATC facts (reference/accuracy-profiling-atc.md §1.3): the four dynamic mechanisms
are mutually exclusive (E10009); ``--dynamic_batch_size`` allows ``-1`` only on
axis 0; ``--dynamic_image_size`` only on H and W with NCHW/NHWC; ``--dynamic_dims``
fills ``-1`` placeholders in order with ``--input_format=ND``; shape ranges
(``--input_shape="x:1~16,…"``) run ops in dynamic-shape mode (slower) and are not
supported on 310/310B-class products.  ``set_compile_mode(jit_compile=False)``:
reference/accuracy-profiling-atc.md §6 advisor rows and
op-support-and-versions.md §2.2 (JIT disabled by default on SoC ≥ Ascend910B1).
"""

from __future__ import annotations


DATA_DEPENDENT = {
    "nonzero": "output size = number of non-zero elements",
    "masked_select": "output size = number of True mask elements",
    "_unique2": "output size = number of distinct values",
    "unique_dim": "output size = number of distinct values",
    "unique_consecutive": "output size = number of runs",
    "_unique": "output size = number of distinct values",
    "repeat_interleave.Tensor": "output size = sum of the repeats tensor",
    "bincount": "output size = max value + 1",
    "histc": "",
}
HOST_SYNC = {
    "_local_scalar_dense": "tensor.item() / float(t) / int(t): copies a value to the host and waits for the device",
    "is_nonzero": "bool(tensor) / `if tensor:`: host sync",
    "equal": "torch.equal returns a Python bool: host sync",
}
ATC_SOURCE = "reference/accuracy-profiling-atc.md §1.3 (ATC dynamic-shape mechanisms)"


def data_dependent(records: list) -> list:
    """Data-dependent-shape ops and host syncs among recorded ops (with lines)."""
    out = []
    for r in records:
        op = r["op"]
        lines = list(r.get("lines", {}))[:3]
        if op in DATA_DEPENDENT:
            out.append({"op": op, "kind": "data_dependent", "count": r["count"], "lines": lines,
                        "why": DATA_DEPENDENT[op] or "output shape depends on values"})
        elif op in ("index.Tensor", "index_put_", "_index_put_impl_") and any(
                "bool" in s["dtypes"][1:] for s in r.get("signatures", [])):
            out.append({"op": op, "kind": "data_dependent", "count": r["count"], "lines": lines,
                        "why": "boolean-mask indexing (x[mask]) is a nonzero() under the hood"})
        elif op in HOST_SYNC:
            out.append({"op": op, "kind": "host_sync", "count": r["count"], "lines": lines, "why": HOST_SYNC[op]})
    return out


def _sigset(r: dict) -> set:
    return {tuple(tuple(x) if x is not None else None for x in s["shapes"]) for s in r.get("signatures", [])}


def compare_runs(first: list, second: list) -> dict:
    """Ops whose input shapes differ between two runs; ops present in only one run."""
    a = {r["op"]: r for r in first}
    b = {r["op"]: r for r in second}
    changed, same = [], []
    for op in a:
        if op in b:
            (changed if _sigset(a[op]) != _sigset(b[op]) else same).append(op)
    lines = {op: (list(a[op].get("lines", {})) or [None])[0] for op in changed}
    return {"shape_changing_ops": changed, "shape_stable_ops": same, "shape_changing_lines": lines,
            "only_first": [o for o in a if o not in b], "only_second": [o for o in b if o not in a]}


def atc_advice(specs1: list, specs2: list, dd: list, chip=None) -> dict:
    """ATC mode for the axes that differ between two input sets (``InputSpec`` lists)."""
    varying = {}
    for s1, s2 in zip(specs1, specs2):
        axes = [i for i, (x, y) in enumerate(zip(s1.shape, s2.shape)) if x != y]
        if axes:
            varying[s1.name] = axes
    advice = {"varying_axes": varying, "mode": None, "atc": None, "notes": [], "source": ATC_SOURCE}
    if not varying:
        advice["mode"] = "static"
        advice["atc"] = "--input_shape=\"" + ";".join(f"{s.name}:{','.join(map(str, s.shape))}" for s in specs1) + "\""
    elif all(ax == [0] for ax in varying.values()):
        advice["mode"] = "dynamic_batch_size"
        shapes = ";".join(f"{s.name}:{','.join(['-1'] + [str(d) for d in s.shape[1:]])}" if s.name in varying
                          else f"{s.name}:{','.join(map(str, s.shape))}" for s in specs1)
        batches = sorted({s.shape[0] for s in specs1 + specs2 if s.name in varying})
        advice["atc"] = f'--input_shape="{shapes}" --dynamic_batch_size="{",".join(map(str, batches))}"'
        advice["notes"].append("2…100 batch profiles; the app sets one with aclmdlSetDynamicBatchSize")
    elif all(len(s.shape) == 4 and varying.get(s.name, [2, 3]) == [2, 3] for s in specs1):
        advice["mode"] = "dynamic_image_size"
        shapes = ";".join(f"{s.name}:{s.shape[0]},{s.shape[1]},-1,-1" for s in specs1)
        hw = []
        for s in (specs1[0], specs2[0]):
            hw.append(f"{s.shape[2]},{s.shape[3]}")
        advice["atc"] = f'--input_shape="{shapes}" --input_format=NCHW --dynamic_image_size="{";".join(hw)}"'
        advice["notes"].append("-1 only on H and W; NCHW/NHWC input format")
    else:
        advice["mode"] = "dynamic_dims"
        shapes, prof1, prof2 = [], [], []
        for s1, s2 in zip(specs1, specs2):
            ax = varying.get(s1.name, [])
            shapes.append(f"{s1.name}:" + ",".join("-1" if i in ax else str(d) for i, d in enumerate(s1.shape)))
            prof1 += [str(s1.shape[i]) for i in ax]
            prof2 += [str(s2.shape[i]) for i in ax]
        advice["atc"] = (f'--input_format=ND --input_shape="{";".join(shapes)}" '
                         f'--dynamic_dims="{",".join(prof1)};{",".join(prof2)}"')
        advice["notes"].append("or pad to one fixed length with an attention mask and compile a static model")
    if any(d["kind"] == "data_dependent" for d in dd):
        advice["notes"].append("data-dependent ops (" + ", ".join(sorted({d['op'] for d in dd if d['kind'] == 'data_dependent'}))
                               + ") give value-dependent shapes: profile modes cannot cover them — rewrite them "
                                 "(torch.where / masks) or use shape ranges (--input_shape with ~, dynamic-shape mode, slower; "
                                 "not on 310/310B-class products)")
    if varying or dd:
        jit = getattr(chip, "default_jit_compile", None) if chip is not None else None
        if jit is False:
            advice["notes"].append(f"eager NPU runs: JIT compile is already off by default on {chip.soc_version} "
                                   "(binary kernels, no per-shape recompilation)")
        else:
            advice["notes"].append("eager NPU runs with varying shapes: torch_npu.npu.set_compile_mode(jit_compile=False) "
                                   "avoids online recompilation per shape (default on SoC ≥ Ascend910B1; "
                                   "first-gen 910 / 310P compile online by default)")
    return advice
