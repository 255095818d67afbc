"""Run a PyTorch factory or an ONNX model (onnxruntime, CPU) on named numpy inputs."""

from __future__ import annotations

import os
from typing import Any, Optional, Sequence

import numpy as np

from ascendify.errors import AscendifyError


def ort_session(model: Any, optimize: bool = False) -> Any:
    """An onnxruntime CPU session for a path or ``ModelProto``; ``optimize=False`` disables
    graph optimisation so fused nodes do not hide tensors (as msit's ``-ofs False``)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    src = model if isinstance(model, (str, bytes)) else model.SerializeToString()
    try:
        return ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001
        where = model if isinstance(model, str) else "the ONNX model"
        raise AscendifyError(f"{where}: onnxruntime cannot load it ({str(exc).splitlines()[0][:300]})") from None


class Runner:
    """``input_names``, ``output_names`` and ``run(feeds) -> {output_name: ndarray}``."""

    input_names: list[str]
    output_names: list[str]
    kind: str

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:  # pragma: no cover - interface
        raise NotImplementedError


class OnnxRunner(Runner):
    def __init__(self, path: str) -> None:
        self.kind = "onnx"
        self.sess = ort_session(path, optimize=True)
        self.path = path
        self.input_names = [i.name for i in self.sess.get_inputs()]
        self.output_names = [o.name for o in self.sess.get_outputs()]
        self._types = {i.name: i.type for i in self.sess.get_inputs()}

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        conv = {}
        for n in self.input_names:
            a = feeds[n]
            t = self._types[n]
            if t == "tensor(float)" and a.dtype != np.float32:
                a = a.astype(np.float32)
            elif t == "tensor(float16)" and a.dtype != np.float16:
                a = a.astype(np.float16)
            elif t == "tensor(int64)" and a.dtype != np.int64:
                a = a.astype(np.int64)
            elif t == "tensor(int32)" and a.dtype != np.int32:
                a = a.astype(np.int32)
            conv[n] = a
        try:
            outs = self.sess.run(None, conv)
        except Exception as exc:  # noqa: BLE001
            raise AscendifyError(f"{self.path}: onnxruntime run failed ({str(exc).splitlines()[0][:300]})") from None
        return dict(zip(self.output_names, outs))


class TorchRunner(Runner):
    def __init__(self, spec: str, input_names: Optional[Sequence[str]] = None,
                 output_names: Optional[Sequence[str]] = None) -> None:
        from ascendify.export.loader import forward_input_names, load_factory

        self.kind = "torch"
        self.spec = spec
        self.model = load_factory(spec)
        self.input_names = list(input_names or forward_input_names(self.model) or ["input"])
        self._out_names = list(output_names) if output_names else None
        self.output_names = list(output_names or [])

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        import torch

        from ascendify.export.loader import flatten_outputs

        args = []
        for n in self.input_names:
            if n not in feeds:
                break
            args.append(torch.from_numpy(np.ascontiguousarray(feeds[n])))
        try:
            with torch.no_grad():
                out = self.model(*args)
        except Exception as exc:  # noqa: BLE001
            raise AscendifyError(f"{self.spec}: forward failed on inputs "
                                 f"{ {k: tuple(v.shape) for k, v in feeds.items()} }: {type(exc).__name__}: {exc}") from None
        flat = flatten_outputs(out, self._out_names)
        if not self.output_names:
            self.output_names = [n for n, _ in flat]
        return {n: t.detach().cpu().float().numpy() if t.dtype == torch.bfloat16 else t.detach().cpu().numpy()
                for n, t in flat}


def make_runner(model: str, input_names: Optional[Sequence[str]] = None,
                output_names: Optional[Sequence[str]] = None) -> Runner:
    """``*.onnx`` → :class:`OnnxRunner`; ``pkg.module:factory`` → :class:`TorchRunner`."""
    if model.lower().endswith(".onnx"):
        if not os.path.isfile(model):
            raise AscendifyError(f"{model}: no such ONNX file")
        return OnnxRunner(model)
    return TorchRunner(model, input_names, output_names)
