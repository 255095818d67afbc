"""Export a PyTorch factory to ONNX for ATC and validate the result.

Export uses the TorchScript-based exporter (``torch.onnx.export(..., dynamo=False)``):
it works offline without onnxscript and writes opset 9–17 graphs with classic ops
(the dynamo exporter targets opset 18+, above what ATC's ONNX parser documents;
accuracy-profiling-atc.md §1.5).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from ascendify.errors import AscendifyError
from ascendify.export import aipp as A
from ascendify.export.atc import (
    AtcPlan,
    InputSpec,
    atc_args,
    output_prefix,
    plan_dynamic,
    precision_note,
    atc_script,
    render_command,
)
from ascendify.fsutil import atomic_write, replace_file

_NP = {"float32": np.float32, "float16": np.float16, "int64": np.int64, "int32": np.int32, "uint8": np.uint8,
       "int8": np.int8, "bool": np.bool_}


def make_wrappers() -> tuple[type, type]:
    import torch

    class NormalizeWrapper(torch.nn.Module):
        """In-graph preprocessing: cast to float32, ``x·scale``, ``(x − mean)/std`` per channel,
        NHWC → NCHW when ``layout == "NHWC"``; other inputs pass through."""

        def __init__(self, model: Any, mean: Sequence[float], std: Sequence[float], scale: float, layout: str,
                     index: int = 0) -> None:
            super().__init__()
            self.model = model
            self.scale = float(scale)
            self.nhwc = layout.upper() == "NHWC"
            self.index = index
            self.register_buffer("mean", torch.tensor(list(mean), dtype=torch.float32).view(1, -1, 1, 1))
            self.register_buffer("std", torch.tensor(list(std), dtype=torch.float32).view(1, -1, 1, 1))

        def forward(self, *args: Any) -> Any:
            args = list(args)
            x = args[self.index].to(torch.float32)
            if self.nhwc:
                x = x.permute(0, 3, 1, 2)
            if self.scale != 1.0:
                x = x * self.scale
            args[self.index] = (x - self.mean) / self.std
            return self.model(*args)

    class FlattenOutputs(torch.nn.Module):
        """Return the model's outputs as a flat tuple (dicts / ModelOutput / nested tuples)."""

        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, *args: Any) -> Any:
            from ascendify.export.loader import flatten_outputs

            return tuple(t for _, t in flatten_outputs(self.model(*args)))

    return NormalizeWrapper, FlattenOutputs


@contextlib.contextmanager
def _quiet_fds() -> Iterator[None]:
    """Silence C++-level prints of the exporter (e.g. 'Torch IR graph at exception')."""
    saved = []
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        tmp = tempfile.TemporaryFile()
        for fd in (1, 2):
            saved.append((fd, os.dup(fd)))
            os.dup2(tmp.fileno(), fd)
    except (OSError, ValueError):
        for fd, s in saved:
            os.dup2(s, fd)
            os.close(s)
        saved = []
        tmp = None
    try:
        yield
    finally:
        for fd, s in saved:
            os.dup2(s, fd)
            os.close(s)
        if tmp is not None:
            tmp.close()


def example_inputs(specs: Sequence[InputSpec], shapes: dict[str, list[int]], seed: int = 0) -> dict[str, np.ndarray]:
    """Random example arrays for ``shapes`` (input → shape): float N(0,1) (or uniform in the
    spec's value range), uint8 0..255, integers 0..1 by default, bool random."""
    rng = np.random.default_rng(seed)
    out = {}
    for s in specs:
        shp = shapes[s.name]
        dt = _NP[s.dtype]
        if s.dtype in ("float32", "float16"):
            if s.value_range:
                a = rng.uniform(s.value_range[0], s.value_range[1], size=shp)
            else:
                a = rng.standard_normal(size=shp)
        elif s.dtype == "bool":
            a = rng.integers(0, 2, size=shp).astype(bool)
        elif s.dtype == "uint8" and not s.value_range:
            a = rng.integers(0, 256, size=shp)
        else:
            lo, hi = s.value_range or (0, 1)
            a = rng.integers(int(lo), int(hi) + 1, size=shp)
        out[s.name] = np.ascontiguousarray(np.asarray(a).astype(dt))
    return out


def _find_source_line(model: Any, args: tuple, kind: str) -> Optional[str]:
    """The user's source line of the first traced node of ``kind`` (e.g. ``aten::fft_fft``)."""
    import torch

    try:
        with warnings.catch_warnings(), _quiet_fds():
            warnings.simplefilter("ignore")
            tr = torch.jit.trace(model, args, check_trace=False, strict=False)
        graph = tr.inlined_graph
    except Exception:  # noqa: BLE001
        return None
    torch_dir = os.path.dirname(torch.__file__)

    def walk(g: Any) -> Iterator[Any]:
        for n in g.nodes():
            yield n
            for b in n.blocks():
                yield from walk(b)

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the ascendify package
    for n in walk(graph):
        if n.kind() != kind:
            continue
        frames = [re.match(r"^(.*)\((\d+)\): (\S+)$", ln.strip()) for ln in str(n.sourceRange()).splitlines()]
        frames = [m for m in frames if m]
        for m in frames:
            path = m.group(1)
            if not path.startswith(torch_dir) and not path.startswith(here):
                return f"{path}:{m.group(2)} in {m.group(3)}"
        if frames:
            return f"{frames[0].group(1)}:{frames[0].group(2)}"
    return None


def _legacy_exporter_kw() -> dict[str, Any]:
    """``dynamo=False`` where ``torch.onnx.export`` has the switch (torch >= 2.5 defaults to
    the dynamo exporter from 2.9); older torch only has the TorchScript exporter."""
    import inspect

    import torch

    try:
        params = inspect.signature(torch.onnx.export).parameters
    except (TypeError, ValueError):
        return {}
    return {"dynamo": False} if "dynamo" in params else {}


@dataclass
class ExportResult:
    onnx_path: str
    command: str
    script_path: str
    report_path: str
    aipp_path: Optional[str]
    plan: AtcPlan
    opset: int
    input_names: list[str]
    output_names: list[str]
    findings: list[dict[str, Any]] = field(default_factory=list)
    parity: dict[str, Any] = field(default_factory=dict)
    profile_runs: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ok: bool = True

    def as_dict(self) -> dict[str, Any]:
        from ascendify.compare.engine import _jsonable

        return _jsonable({
            "onnx": self.onnx_path, "atc_command": self.command, "atc_script": self.script_path,
            "aipp_config": self.aipp_path, "opset": self.opset, "inputs": self.input_names, "outputs": self.output_names,
            "dynamic_mode": self.plan.mode, "input_shape": self.plan.input_shape,
            "dynamic_option": [self.plan.flag, self.plan.value] if self.plan.flag else None,
            "input_format": self.plan.input_format, "findings": self.findings, "parity": self.parity,
            "profile_runs": self.profile_runs, "notes": self.notes, "ok": self.ok,
        })


def _walk_nodes(graph: Any) -> Iterator[Any]:
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.g is not None and len(a.g.node):
                yield from _walk_nodes(a.g)
            for g in a.graphs:
                yield from _walk_nodes(g)


def export_model(factory: str, specs: Sequence[InputSpec], out: str, *, batch: Optional[str] = None,
                 image_size: Optional[str] = None, dims: Optional[str] = None,
                 normalize: Optional[tuple[Sequence[float], Sequence[float]]] = None, aipp: bool = False,
                 aipp_input: Optional[str] = None, opset: int = 11, soc_version: Optional[str] = None,
                 precision_mode: str = "force_fp16", layout: str = "NCHW", pixel_scale: Optional[float] = None,
                 output_names: Optional[Sequence[str]] = None, parity_cosine: float = 0.9999,
                 max_profile_runs: int = 8) -> ExportResult:
    """Export ``factory`` to ``out`` (.onnx), validate it and write the atc script
    (``<prefix>.atc.sh``), the report (``<prefix>.export.json``) and, with ``aipp``, the
    AIPP config (``<prefix>.aipp.cfg``).  Raises ``AscendifyError`` for bad options,
    unexportable models (naming the op and the PyTorch source line) and ONNX that fails
    ``onnx.checker`` or onnxruntime; parity below ``parity_cosine`` sets ``ok = False``."""
    import onnx
    import torch

    from ascendify.compare.metrics import compare_arrays
    from ascendify.compare.runner import ort_session
    from ascendify.export.loader import flatten_outputs, load_factory
    from ascendify.kb.atc import check_ops, check_opset

    if not out.lower().endswith(".onnx"):
        raise AscendifyError(f"{out}: the output file must end in .onnx")
    if aipp and normalize is None:
        raise AscendifyError("--aipp needs --normalize MEAN;STD (the values AIPP applies to uint8 pixels)")
    if not 7 <= opset <= 20:
        raise AscendifyError(f"--opset {opset}: use 11 (recommended for ATC) up to 17")
    plan = plan_dynamic(specs, batch, image_size, dims, layout, aipp=aipp)
    notes = list(plan.notes)
    if soc_version:
        from ascendify.export.atc import SOC_PATTERN

        if not SOC_PATTERN.match(soc_version):
            notes.append(f"--chip {soc_version} does not look like Ascend310P3 / Ascend910B3 / Ascend910_9392; "
                         "take it from 'npu-smi info' (Name column, prefixed with 'Ascend')")
        if plan.mode == "shape_range" and soc_version.startswith("Ascend310"):
            notes.append("shape ranges are not supported on Atlas 200/300/500 (310/310B-class) inference parts")
    base_model = load_factory(factory)
    NormalizeWrapper, FlattenOutputs = make_wrappers()
    aipp_idx = A.image_input_index(specs, aipp_input) if (aipp or normalize) else 0
    model = base_model
    if normalize is not None and not aipp:
        mean, std = normalize
        spec = specs[aipp_idx]
        scale = pixel_scale if pixel_scale is not None else (1.0 / 255.0 if spec.dtype == "uint8" else 1.0)
        ch_axis = 3 if layout.upper() == "NHWC" else 1
        if spec.rank == 4 and spec.dims[ch_axis].value not in (-1, len(mean)):
            raise AscendifyError(f"--normalize has {len(mean)} channels but input {spec.name} has "
                                 f"{spec.dims[ch_axis].value} on its {layout.upper()} channel axis")
        model = NormalizeWrapper(base_model, mean, std, scale, layout, aipp_idx)
    elif layout.upper() == "NHWC" and normalize is None:
        notes.append("--layout NHWC only sets ATC's --input_format; the model itself must accept NHWC")
    model = FlattenOutputs(model).eval()

    # example input: the first profile whose batch is >= 2 when possible (avoids batch-1 specialisation)
    ex_shapes = plan.profiles[0]
    if plan.mode == "dynamic_batch":
        ex_shapes = next((p for p in plan.profiles if any(v[0] >= 2 for v in p.values() if v)), ex_shapes)
    feeds = example_inputs(specs, ex_shapes)
    args = tuple(torch.from_numpy(feeds[s.name]) for s in specs)
    try:
        with torch.no_grad():
            ref = model(*args)
    except Exception as exc:  # noqa: BLE001
        raise AscendifyError(f"{factory}: forward fails on example inputs "
                             f"{ {k: list(v.shape) for k, v in feeds.items()} }: {type(exc).__name__}: {exc}") from None
    flat_names = [n for n, _ in flatten_outputs(ref)]
    if output_names:
        if len(output_names) != len(ref):
            raise AscendifyError(f"--output-names gives {len(output_names)} names but the model returns {len(ref)} tensors")
        out_names = list(output_names)
    else:
        out_names = ["output"] if len(ref) == 1 else [f"output{i}" for i in range(len(ref))]
        _ = flat_names
    dyn_axes: dict[str, dict[int, str]] = {}
    for s in specs:
        axes = s.dynamic_axes
        if axes:
            dyn_axes[s.name] = {a: ("batch" if a == 0 and plan.mode == "dynamic_batch" else f"{s.name}_dim{a}") for a in axes}
    if dyn_axes:
        for o, t in zip(out_names, ref):
            if t.dim() >= 1 and plan.mode == "dynamic_batch":
                dyn_axes.setdefault(o, {0: "batch"})
    tmp_dir = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(tmp_dir):
        raise AscendifyError(f"{out}: folder {tmp_dir} does not exist")
    fd, tmp = tempfile.mkstemp(dir=tmp_dir, prefix=".ascendify-", suffix=".onnx")
    os.close(fd)
    try:
        try:
            with warnings.catch_warnings(), _quiet_fds(), torch.no_grad():
                warnings.simplefilter("ignore")
                torch.onnx.export(model, args, tmp, opset_version=opset,
                                  input_names=[s.name for s in specs], output_names=out_names,
                                  dynamic_axes=dyn_axes or None, do_constant_folding=True, **_legacy_exporter_kw())
        except Exception as exc:  # noqa: BLE001
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            m = re.search(r"'((?:aten|prim|onnx|quantized)::\w+)'", msg)
            if m:
                where = _find_source_line(model, args, m.group(1))
                raise AscendifyError(f"{factory}: cannot export {m.group(1)} at opset {opset}"
                                     f"{' (' + where + ')' if where else ''}: {msg[:200]}; rewrite that line with "
                                     "supported ops, try another --opset, or register a custom symbolic") from None
            raise AscendifyError(f"{factory}: ONNX export failed: {type(exc).__name__}: {msg[:300]}") from None
        try:
            onnx.checker.check_model(tmp)
        except Exception as exc:  # noqa: BLE001
            raise AscendifyError(f"{out}: onnx.checker rejects the exported model: {str(exc).splitlines()[0][:300]}") from None
        om = onnx.load(tmp)
        replace_file(tmp, out)  # mkstemp made it 0o600: the user's umask instead
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    graph_inputs = [i.name for i in om.graph.input if i.name not in {x.name for x in om.graph.initializer}]
    spec_names = [s.name for s in specs]
    if graph_inputs != spec_names:
        raise AscendifyError(f"{out}: the ONNX graph inputs are {graph_inputs}, not {spec_names} (an unused input is "
                             "dropped by the exporter); ATC's --input_shape must name the graph inputs exactly")
    opsets = {o.domain or "": o.version for o in om.opset_import}
    real_opset = opsets.get("", opset)
    findings = [f.as_dict() for f in check_opset(real_opset)]
    findings += [f.as_dict() for f in check_ops((n.domain, n.op_type, n.name) for n in _walk_nodes(om.graph))]
    if plan.mode in ("dynamic_batch", "dynamic_image_size", "dynamic_dims"):
        dd = sorted({n.op_type for n in _walk_nodes(om.graph) if n.op_type in ("NonZero", "Unique")})
        if dd:
            findings.append({"level": "warning", "op_type": ",".join(dd), "message":
                             f"{', '.join(dd)} give data-dependent shapes, which profile-based dynamic modes do not support",
                             "nodes": [], "count": 0, "source": "accuracy-profiling-atc.md §1.3", "verified": True})

    # parity: onnxruntime vs PyTorch on the example input
    sess = ort_session(out, optimize=True)
    try:
        ort_out = sess.run(None, feeds)
    except Exception as exc:  # noqa: BLE001
        raise AscendifyError(f"{out}: onnxruntime cannot run the exported model ({str(exc).splitlines()[0][:300]})") from None
    parity: dict[str, Any] = {"threshold_cosine": parity_cosine, "input_shapes": {k: list(v.shape) for k, v in feeds.items()},
                              "outputs": {}}
    ok = True
    for name, t, o in zip(out_names, ref, ort_out):
        r = compare_arrays(o, t.detach().numpy())
        good = (r["cosine"] >= parity_cosine or (r["max_abs"] == 0.0)) and not r["nonfinite_mismatch"] \
            and list(o.shape) == list(t.shape)
        parity["outputs"][name] = {"cosine": r["cosine"], "max_abs": r["max_abs"], "rel_euclid": r["rel_euclid"],
                                   "shape_onnx": list(o.shape), "shape_torch": list(t.shape), "pass": bool(good)}
        ok &= bool(good)
    # every profile (evenly sampled, at most max_profile_runs) must run in onnxruntime
    runs = []
    profs = plan.profiles
    if len(profs) > max_profile_runs:
        idx = sorted({round(i * (len(profs) - 1) / (max_profile_runs - 1)) for i in range(max_profile_runs)})
        profs = [profs[i] for i in idx]
        notes.append(f"onnxruntime was run at {len(profs)} of {len(plan.profiles)} profiles")
    for p in profs:
        f2 = example_inputs(specs, p, seed=1)
        try:
            outs = sess.run(None, f2)
            runs.append({"shapes": p, "ok": True, "output_shapes": {n: list(x.shape) for n, x in zip(out_names, outs)}})
        except Exception as exc:  # noqa: BLE001
            runs.append({"shapes": p, "ok": False, "error": str(exc).splitlines()[0][:300]})
            ok = False

    prefix = output_prefix(out)
    aipp_path = None
    if aipp:
        assert normalize is not None
        spec = specs[aipp_idx]
        if spec.rank != 4 or layout.upper() != "NCHW":
            raise AscendifyError("--aipp needs a 4-D NCHW float image input (the model's own input, without normalisation)")
        h, w = spec.dims[2], spec.dims[3]
        width = w.value if w.value > 0 else 0
        height = h.value if h.value > 0 else 0
        scale = pixel_scale if pixel_scale is not None else 1.0 / 255.0
        cfg = A.aipp_config(normalize[0], normalize[1], width, height, aipp_idx, scale=scale)
        aipp_path = prefix + ".aipp.cfg"
        atomic_write(aipp_path, cfg.encode("utf-8"))
        # check: AIPP applied in numpy to uint8 pixels, then ONNX, equals PyTorch on the same normalised pixels
        shp = ex_shapes[spec.name]
        pix = np.random.default_rng(2).integers(0, 256, size=(shp[0], shp[2], shp[3], shp[1])).astype(np.uint8)
        fa = dict(feeds)
        fa[spec.name] = A.apply_aipp(pix, A.parse_aipp(cfg))
        mean_t = torch.tensor(list(normalize[0])).view(1, -1, 1, 1)
        std_t = torch.tensor(list(normalize[1])).view(1, -1, 1, 1)
        xt = (torch.from_numpy(pix).permute(0, 3, 1, 2).float() * scale - mean_t) / std_t
        targs = [torch.from_numpy(fa[s.name]) if s.name != spec.name else xt for s in specs]
        with torch.no_grad():
            tref = model(*targs)
        r = compare_arrays(sess.run(None, fa)[0], tref[0].numpy())
        parity["aipp_check"] = {"cosine": r["cosine"], "max_abs": r["max_abs"], "pass": bool(r["cosine"] >= parity_cosine)}
        ok &= bool(r["cosine"] >= parity_cosine)
        notes.append("AIPP: at run time the image input is uint8 NHWC (RGB888_U8) pixels, normalised on AI Core; "
                     "the exported ONNX does not normalise (do not add --normalize in the app)")
        if plan.mode == "dynamic_image_size":
            notes.append("AIPP with dynamic image size: src_image_size is 0 (from the model); check the AIPP output "
                         "H,W equal the model input (E70014)")

    args_list = atc_args(out, plan, soc_version, precision_mode, insert_op_conf=aipp_path)
    command = render_command(args_list)
    notes.append(precision_note(precision_mode))
    notes.append("--output_type=FP32 keeps the .om outputs in fp32 so they compare directly with the PyTorch baseline")
    notes.append("if atc fails, rerun with --log=info (or export ASCEND_SLOG_PRINT_TO_STDOUT=1) and read the first "
                 "E-code line; plogs are under $HOME/ascend/log/")
    if not soc_version:
        notes.append("set SOC_VERSION from 'npu-smi info' (Name column, prefixed with 'Ascend', e.g. Ascend910B3) "
                     "or pass --chip")
    if plan.mode == "dynamic_batch":
        notes.append("at run time the .om has an extra input 'ascend_mbatch_shape_data'; select a profile with "
                     "aclmdlSetDynamicBatchSize (ais_bench --dym-batch N)")
    elif plan.mode == "dynamic_image_size":
        notes.append("at run time select a profile with aclmdlSetDynamicHWSize (ais_bench --dym-hw H,W)")
    elif plan.mode == "dynamic_dims":
        notes.append("at run time select a profile with aclmdlSetInputDynamicDims (ais_bench --dym-dims)")
    comments = [f"atc command generated by 'ascendify export {factory}'",
                f"ONNX opset {real_opset}; inputs: {plan.input_shape}; dynamic mode: {plan.mode}"] + notes
    script = atc_script(out, plan, soc_version, precision_mode, insert_op_conf=aipp_path, comments=comments)
    script_path = prefix + ".atc.sh"
    atomic_write(script_path, script.encode("utf-8"), mode=0o777)  # executable: 0o777 less the umask
    res = ExportResult(out, command, script_path, prefix + ".export.json", aipp_path, plan, real_opset,
                       spec_names, out_names, findings, parity, runs, notes, ok)
    atomic_write(res.report_path, (json.dumps(res.as_dict(), indent=1) + "\n").encode("utf-8"))
    return res
