"""Layer-wise localisation without an NPU (``ascendify compare --layers``).

The ONNX model is run twice in onnxruntime with graph optimisation off (so every
node keeps its tensor, as msit's ``-ofs False``): once in fp32 (golden) and once
with ATC's default ``--precision_mode=force_fp16`` *emulated*: every float
initializer, float graph input and float node output is rounded to fp16 and back
(Cast→FLOAT16→Cast→FLOAT after each node), so values beyond ±65504 become ±Inf
and every activation carries fp16 precision, while each op computes in fp32.
This is an approximation of the NPU (which also changes kernels, fusion and
accumulation order); a real NPU dump can be paired instead (``--npu-dump``).

Every node output is paired by tensor name, in graph (topological) order, and
compared with the msit metrics; the report names the first node failing a
monitor (msit's ``FIRST_INVALID_OVERALL`` strategy), the first node whose fp32
output exceeds the fp16 range (65504; "FP16 Overflow"), and the nodes to keep in
fp32 (a ``--keep_dtype`` file for ATC: one node name per line), then re-runs the
emulation with those nodes kept to show whether the network outputs recover.
Sources: accuracy-profiling-atc.md §1.2 (``--keep_dtype``, ``--precision_mode``),
§2.2 (pairing), §2.4 (thresholds, analyser strategies, advisor FP16 Overflow).
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from ascendify.compare import metrics as M
from ascendify.compare.io import open_collection
from ascendify.compare.runner import ort_session
from ascendify.errors import AscendifyError

_FLOAT = 1  # onnx.TensorProto.FLOAT
_SKIP_OPS = {"Constant", "Shape", "Identity"}


def load_model(path: str) -> Any:
    import onnx

    try:
        return onnx.load(path)
    except Exception as exc:  # noqa: BLE001
        raise AscendifyError(f"{path}: not a readable ONNX model ({exc})") from None


def name_nodes(model: Any) -> None:
    """Give unnamed nodes the name ``<OpType>_<index>`` (as msit does), in place."""
    seen = set()
    for i, n in enumerate(model.graph.node):
        if not n.name or n.name in seen:
            n.name = f"{n.op_type}_{i}"
        seen.add(n.name)


def with_all_outputs(model: Any) -> Any:
    """A copy of ``model`` whose graph outputs include every node output."""
    import onnx

    m = copy.deepcopy(model)
    existing = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in existing:
                m.graph.output.append(onnx.ValueInfoProto(name=o))
                existing.add(o)
    return m


def emulate_fp16(model: Any, float_tensors: set[str], keep: frozenset[str] = frozenset()) -> Any:
    """A copy of ``model`` in which the tensors in ``float_tensors`` (node outputs and
    graph inputs known to be float32) are rounded to fp16 and back, except outputs of
    nodes named in ``keep``; float32 initializers and Constant values are rounded too."""
    from onnx import helper, numpy_helper

    m = copy.deepcopy(model)
    g = m.graph
    keep_inits: dict[str, str] = {}
    float_inits = {i.name for i in g.initializer if i.data_type == _FLOAT}
    for node in g.node:
        if node.name in keep:
            for j, x in enumerate(node.input):
                if x in float_inits:
                    keep_inits.setdefault(x, f"{x}__fp32keep")
                    node.input[j] = keep_inits[x]
    extra = []
    for init in g.initializer:
        if init.data_type == _FLOAT:
            arr = numpy_helper.to_array(init)
            if init.name in keep_inits:
                extra.append(numpy_helper.from_array(arr, keep_inits[init.name]))
            init.CopyFrom(numpy_helper.from_array(_round16(arr), init.name))
    g.initializer.extend(extra)
    new_nodes = []
    inputs = {i.name for i in g.input} - {i.name for i in g.initializer}
    rename_inputs = {}
    for name in sorted(inputs & float_tensors):
        r = f"{name}__fp16r"
        new_nodes += _cast_pair(helper, name, r, f"{name}__fp16in")
        rename_inputs[name] = r
    for node in g.node:
        if rename_inputs:
            for j, x in enumerate(node.input):
                if x in rename_inputs:
                    node.input[j] = rename_inputs[x]
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value" and a.t.data_type == _FLOAT:
                    arr = numpy_helper.to_array(a.t)
                    a.t.CopyFrom(numpy_helper.from_array(_round16(arr), a.t.name))
        new_nodes.append(node)
        if node.name in keep:
            continue
        for j, o in enumerate(node.output):
            if o and o in float_tensors:
                raw = f"{o}__fp32raw"
                node.output[j] = raw
                new_nodes += _cast_pair(helper, raw, o, f"{node.name}__fp16out{j}")
    del g.node[:]
    g.node.extend(new_nodes)
    return m


def _cast_pair(helper: Any, src: str, dst: str, base: str) -> list[Any]:
    mid = f"{base}__h"
    return [helper.make_node("Cast", [src], [mid], name=f"{base}__to16", to=10),
            helper.make_node("Cast", [mid], [dst], name=f"{base}__to32", to=_FLOAT)]


SENTINEL = 1.0e30


def _round16(a: np.ndarray) -> np.ndarray:
    """Constants: IEEE round to fp16 (beyond ±65504 → ±Inf), except "−inf-like" fill
    values (|x| ≥ 1e30, e.g. attention masks built from ``finfo(float32).min``), which
    are saturated to ±65504 (how ATC casts such constants is unverified)."""
    with np.errstate(over="ignore", invalid="ignore"):
        big = np.isfinite(a) & (np.abs(a) >= SENTINEL)
        c = np.where(big, np.sign(a) * M.FP16_MAX, a) if big.any() else a
        return c.astype(np.float16).astype(np.float32)


@dataclass
class LayerRow:
    index: int
    node: str
    op_type: str
    tensor: str
    shape: list[int]
    dtype: str
    metrics: dict[str, Any]
    max_abs_golden: float
    overflow: bool
    failed: list[str] = field(default_factory=list)
    output_index: int = 0
    is_output: bool = False
    dtype_candidate: str = ""

    def as_dict(self) -> dict[str, Any]:
        d = {"index": self.index, "node": self.node, "op_type": self.op_type, "tensor": self.tensor,
             "shape": self.shape, "dtype": self.dtype, "max_abs_golden": self.max_abs_golden,
             "fp16_overflow": self.overflow, "failed": self.failed,
             "status": "FAIL" if self.failed else "PASS"}
        for k in M.METRICS:
            d[k] = self.metrics.get(k)
        for k in ("nan_candidate", "inf_candidate", "nan_baseline", "inf_baseline"):
            d[k] = self.metrics.get(k, 0)
        return d


@dataclass
class LayerReport:
    mode: str                     # "fp16-emulation" or "npu-dump"
    rows: list[LayerRow]
    first_invalid: Optional[LayerRow]
    first_overflow: Optional[LayerRow]
    keep: list[str]
    outputs_before: dict[str, dict[str, Any]]
    outputs_after: dict[str, dict[str, Any]]
    unpaired: list[str]
    thresholds: dict[str, float]
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        bad = [o for o in self.outputs_before.values() if o.get("failed")]
        return "FAIL" if bad else "PASS"

    def as_dict(self) -> dict[str, Any]:
        from ascendify.compare.engine import _jsonable

        return _jsonable({
            "mode": self.mode, "verdict": self.verdict, "thresholds": self.thresholds,
            "first_invalid": self.first_invalid.as_dict() if self.first_invalid else None,
            "first_fp16_overflow": self.first_overflow.as_dict() if self.first_overflow else None,
            "keep_dtype": self.keep, "network_outputs": self.outputs_before,
            "network_outputs_with_keep_dtype": self.outputs_after,
            "unpaired_dump_tensors": self.unpaired, "notes": self.notes,
            "rows": [r.as_dict() for r in self.rows],
        })


def _sanitize(name: str) -> str:
    return re.sub(r"[./\\:]", "_", name)


def _dump_index(path: str) -> tuple[dict[str, Any], list[str]]:
    """Map dump keys to candidate refs by several spellings (exact tensor name,
    msit ``<node>.<idx>.<timestamp>``, sanitized names)."""
    col = open_collection(path)
    idx: dict[str, Any] = {}
    for key, ref in col.refs.items():
        base = key.rsplit("/", 1)[-1]
        idx.setdefault(key, ref)
        idx.setdefault(_sanitize(key), ref)
        m = re.match(r"^(.*)\.(\d+)\.(\d{6,})$", base) or re.match(r"^(.*)\.(\d+)$", base)
        if m:
            idx.setdefault(f"{m.group(1)}#{int(m.group(2))}", ref)
        else:
            idx.setdefault(base, ref)
            idx.setdefault(_sanitize(base), ref)
    return idx, list(col.refs)


def _compare_pair(x: np.ndarray, y: np.ndarray, th: dict[str, float]) -> tuple[dict[str, Any], list[str]]:
    x = np.asarray(x)
    y = np.asarray(y)
    if x.size != y.size:
        return {k: float("nan") for k in M.METRICS}, [f"shape mismatch {tuple(x.shape)} vs {tuple(y.shape)}"]
    r = M.compare_arrays(x, y)
    failed = M.check_thresholds(r, th)
    if r["nonfinite_mismatch"]:
        failed.append(f"{r['nonfinite_mismatch']} positions NaN/Inf on one side only")
    return r, failed


def analyse_layers(model_path: str, feeds: dict[str, np.ndarray], thresholds: Optional[dict[str, float]] = None,
                   npu_dump: Optional[str] = None, extra_keep: Optional[list[str]] = None) -> LayerReport:
    """Run the layer-wise comparison for one input sample (``feeds``: input name → array)."""
    th = dict(M.DEFAULT_THRESHOLDS if thresholds is None else thresholds)
    model = load_model(model_path)
    name_nodes(model)
    dump_model = with_all_outputs(model)
    sess = ort_session(dump_model)
    in_types = {i.name: i.type for i in sess.get_inputs()}
    feeds = {k: (v.astype(np.float32) if in_types.get(k) == "tensor(float)" else v) for k, v in feeds.items()}
    missing = [n for n in in_types if n not in feeds]
    if missing:
        raise AscendifyError(f"{model_path}: no data for input(s) {', '.join(missing)}")
    out_names = [o.name for o in sess.get_outputs()]
    try:
        golden = dict(zip(out_names, sess.run(None, feeds)))
    except Exception as exc:  # noqa: BLE001
        raise AscendifyError(f"{model_path}: onnxruntime fp32 run failed ({str(exc).splitlines()[0][:300]})") from None
    net_outputs = [o.name for o in model.graph.output]
    float_tensors = {k for k, v in golden.items() if v.dtype == np.float32}
    float_tensors |= {k for k, v in feeds.items() if np.asarray(v).dtype == np.float32}
    notes: list[str] = []
    unpaired: list[str] = []
    if npu_dump:
        mode = "npu-dump"
        idx, dump_keys = _dump_index(npu_dump)
        cand: dict[str, np.ndarray] = {}
        used = set()
        for node in model.graph.node:
            for j, o in enumerate(node.output):
                if not o:
                    continue
                for k in (o, _sanitize(o), f"{node.name}#{j}", f"{_sanitize(node.name)}#{j}") + \
                        ((node.name, _sanitize(node.name)) if j == 0 else ()):
                    if k in idx:
                        ref = idx[k]
                        cand[o] = ref.load()
                        used.add(ref.key)
                        break
        unpaired = [k for k in dump_keys if k not in used]
        if not cand:
            raise AscendifyError(f"{npu_dump}: no dumped tensor matches a node or tensor name of {model_path}")
        notes.append("NPU dumps must be numpy files named after ONNX tensors or nodes (msit style "
                      "'<node>.<output_idx>.<timestamp>.npy' also works); raw GE dumps must be converted to .npy first")
    else:
        mode = "fp16-emulation"
        sess16 = ort_session(emulate_fp16(dump_model, float_tensors))
        try:
            cand = dict(zip([o.name for o in sess16.get_outputs()], sess16.run(None, feeds)))
        except Exception as exc:  # noqa: BLE001
            raise AscendifyError(f"{model_path}: onnxruntime fp16-emulation run failed ({str(exc).splitlines()[0][:300]})") from None

    rows: list[LayerRow] = []
    const_big: list[str] = []
    i = 0
    for node in model.graph.node:
        for j, o in enumerate(node.output):
            if not o or o not in golden or o not in cand:
                continue
            g = golden[o]
            c = cand[o]
            r, failed = _compare_pair(c, g, th)
            gmax = float(np.max(np.abs(g[np.isfinite(g)]))) if g.dtype.kind == "f" and g.size and np.isfinite(g).any() else 0.0
            overflow = g.dtype.kind == "f" and gmax > M.FP16_MAX and node.op_type != "Constant"
            if node.op_type == "Constant" and g.dtype.kind == "f" and gmax >= SENTINEL:
                const_big.append(node.name)
            if node.op_type in _SKIP_OPS:
                failed = []
            rows.append(LayerRow(i, node.name, node.op_type, o, list(g.shape), str(g.dtype), r, gmax, overflow, failed,
                                 j, o in net_outputs, _cand_dtype(c, g, mode)))
            i += 1
    first_invalid = next((r for r in rows if r.failed), None)
    first_overflow = next((r for r in rows if r.overflow), None)
    keep: list[str] = []
    for r in rows:
        if r.overflow and r.node not in keep and r.op_type not in _SKIP_OPS:
            keep.append(r.node)
    if first_invalid is not None and first_invalid.node not in keep and not keep:
        keep.append(first_invalid.node)
    for k in extra_keep or []:
        if k not in keep:
            keep.append(k)

    def net(cd: dict[str, np.ndarray]) -> dict[str, dict[str, Any]]:
        res = {}
        for o in net_outputs:
            if o in cd and o in golden:
                r, failed = _compare_pair(cd[o], golden[o], th)
                res[o] = {k: r.get(k) for k in M.METRICS}
                res[o].update({k: r.get(k, 0) for k in ("nan_candidate", "inf_candidate", "nan_baseline", "inf_baseline")})
                res[o]["failed"] = failed
        return res

    before = net(cand)
    after: dict[str, dict[str, Any]] = {}
    if mode == "fp16-emulation" and keep:
        sess_k = ort_session(emulate_fp16(dump_model, float_tensors, frozenset(keep)))
        cand_k = dict(zip([o.name for o in sess_k.get_outputs()], sess_k.run(None, feeds)))
        after = net(cand_k)
    if any(np.isnan(golden[o]).any() for o in golden if golden[o].dtype.kind == "f"):
        first_nan = next((r.node for r in rows if r.metrics.get("nan_baseline")), None)
        notes.append(f"the fp32 (golden) run itself produces NaN, first at node {first_nan}")
    if const_big:
        notes.append(f"{len(const_big)} Constant node(s) hold values beyond the fp16 range (e.g. {const_big[0]}, "
                     "typically an attention-mask fill value); the emulation saturates them to ±65504 (unverified for ATC)")
    return LayerReport(mode, rows, first_invalid, first_overflow, keep, before, after, unpaired, th, notes)


def _cand_dtype(c: np.ndarray, g: np.ndarray, mode: str) -> str:
    if mode == "fp16-emulation" and g.dtype == np.float32:
        return "float16"
    return str(np.asarray(c).dtype)


#: msit / msaccucmp result CSV header (accuracy-profiling-atc.md §2.5)
MSIT_CSV_HEADER = ("Index,OpType,NPUDump,DataType,Address,GroundTruth,DataType,Address,TensorIndex,Shape,OverFlow,"
                   "CosineSimilarity,MaxAbsoluteError,AccumulatedRelativeError,RelativeEuclideanDistance,"
                   "KullbackLeiblerDivergence,StandardDeviation,MeanAbsoluteError,RootMeanSquareError,"
                   "MaxRelativeError,MeanRelativeError,CompareFailReason,IsNpuOps,IsOutputNode,IsPrecisionError")


def _num(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "NaN"
    return f"{v:.6f}" if isinstance(v, float) else str(v)


def _std_cell(m: dict[str, Any]) -> str:
    def z(v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "NaN"
        return "0" if abs(v) < 0.001 else f"{v:.3f}"

    return (f"({z(m.get('mean_candidate'))};{z(m.get('std_candidate'))}),"
            f"({z(m.get('mean_baseline'))};{z(m.get('std_baseline'))})")


def write_msit_csv(path: str, rep: LayerReport) -> None:
    """Write the rows in msit's result CSV layout (``result_<ts>.csv`` columns, §2.5), so
    scripts written for msit compare can read them.  NPUDump and GroundTruth are both the
    ONNX node name (1:1 pairing, no fusion); Address is ``NaN``."""
    import csv
    import io

    from ascendify.fsutil import atomic_write

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(MSIT_CSV_HEADER.split(","))
    for r in rep.rows:
        m = r.metrics
        reason = "; ".join(r.failed) if r.failed else ""
        w.writerow([r.index, r.op_type, r.node, r.dtype_candidate or r.dtype, "NaN", r.node, r.dtype, "NaN",
                    f"{r.node}:output:{r.output_index}", str(r.shape), "YES" if r.overflow else "NO",
                    _num(m.get("cosine")), _num(m.get("max_abs")), _num(m.get("acc_rel")), _num(m.get("rel_euclid")),
                    _num(m.get("kl")), _std_cell(m), _num(m.get("mae")), _num(m.get("rmse")), _num(m.get("max_rel")),
                    _num(m.get("mean_rel")), reason, "NO", "YES" if r.is_output else "NO",
                    "YES" if r.failed else "NO"])
    atomic_write(path, buf.getvalue().encode("utf-8"))


def write_keep_dtype(path: str, nodes: list[str]) -> None:
    """Write an ATC ``--keep_dtype`` file: one ONNX node name per line."""
    from ascendify.fsutil import atomic_write

    atomic_write(path, ("\n".join(nodes) + ("\n" if nodes else "")).encode("utf-8"))


def describe_row(r: Optional[LayerRow]) -> str:
    if r is None:
        return "none"
    cos = r.metrics.get("cosine")
    cs = "nan" if cos is None or (isinstance(cos, float) and math.isnan(cos)) else f"{cos:.6f}"
    return f"#{r.index} {r.node} ({r.op_type}) -> {r.tensor}: cosine {cs}, max|fp32| {r.max_abs_golden:.6g}"

