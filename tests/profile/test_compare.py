"""`ascendify profile compare GPU_TRACE NPU_DIR` on traces written from the documented formats."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from ascendify.cli import cli
from ascendify.errors import AscendifyError
from ascendify.profile.compare import compare, npu_op_times
from ascendify.profile.reader import read_trace
from tests.conftest import reference_path


def _x(name, ts, dur, pid=1, tid=1, cat="cpu_op", **args):
    return {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "cat": cat, "args": args}


def gpu_trace(path):
    """torch.profiler chrome-trace shape: {"traceEvents": [...]}, kernels joined by args.correlation."""
    ev = [
        _x("ProfilerStep#1", 0, 1000),
        _x("aten::linear", 0, 100), _x("aten::addmm", 5, 90),           # addmm is nested: linear is the top-level op
        _x("cudaLaunchKernel", 10, 3, cat="cuda_runtime", correlation=1),
        _x("sm80_gemm_kernel", 300, 40, pid=0, tid=7, cat="kernel", correlation=1),
        _x("aten::softmax", 200, 50),
        _x("cudaLaunchKernel", 210, 3, cat="cuda_runtime", correlation=2),
        _x("softmax_warp_forward", 400, 10, pid=0, tid=7, cat="kernel", correlation=2),
    ]
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": ev}))
    return str(path)


def npu_dir(tmp_path):
    """torch_npu trace_view.json shape: bare array, ts as strings, async_npu flows host → device."""
    ev = [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "Python"}},
        {"ph": "M", "name": "process_name", "pid": 800, "tid": 0, "args": {"name": "Ascend Hardware"}},
        _x("ProfilerStep#1", "0.0", 1000),
        _x("aten::linear", "0.0", 100), _x("aten::addmm", "5.0", 90),
        {"ph": "s", "cat": "async_npu", "name": "torch_to_npu", "id": 11, "pid": 1, "tid": 1, "ts": "20.0"},
        {"ph": "f", "cat": "async_npu", "name": "torch_to_npu", "id": 11, "pid": 800, "tid": 3, "ts": "500.0", "bp": "e"},
        {"ph": "X", "name": "aclnnAddmm_MatMulCommon_MatMulV2", "pid": 800, "tid": 3, "ts": "500.0", "dur": 60},
        _x("aten::softmax", "200.0", 50),
        {"ph": "s", "cat": "async_npu", "name": "torch_to_npu", "id": 12, "pid": 1, "tid": 1, "ts": "210.0"},
        {"ph": "f", "cat": "async_npu", "name": "torch_to_npu", "id": 12, "pid": 800, "tid": 3, "ts": "600.0", "bp": "e"},
        {"ph": "X", "name": "aclnnSoftmax_SoftmaxV2_SoftmaxV2", "pid": 800, "tid": 3, "ts": "600.0", "dur": 35},
    ]
    out = tmp_path / "npu_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    (out / "trace_view.json").write_text(json.dumps(ev))
    return str(out.parent)


def test_compare_per_op(tmp_path):
    c = compare(gpu_trace(tmp_path / "gpu.json"), npu_dir(tmp_path))
    assert c["per_step"] is True and c["gpu_steps"] == c["npu_steps"] == 1
    # linear: GPU 40 us vs NPU 60 us (+20); softmax: GPU 10 vs NPU 35 (+25, 3.5x)
    assert [(r["op"], r["gpu_us"], r["npu_us"], r["ratio"], r["diff_us"]) for r in c["slower_on_npu"]] == [
        ("aten::softmax", 10.0, 35.0, 3.5, 25.0),
        ("aten::linear", 40.0, 60.0, 1.5, 20.0),
    ]
    assert c["gpu_total_us"] == 50.0 and c["npu_total_us"] == 95.0 and c["ratio"] == 1.9
    r = CliRunner().invoke(cli, ["profile", "compare", str(tmp_path / "gpu.json"), npu_dir(tmp_path / "again")], standalone_mode=False)
    assert r.exception is None, r.output
    assert "aten::softmax" in r.output and "3.50×" in r.output and "NPU/GPU = 1.90×" in r.output


def test_compare_bad_inputs(tmp_path):
    with pytest.raises(AscendifyError, match="no such file"):
        compare(str(tmp_path / "missing.json"), str(tmp_path))
    bad = tmp_path / "bad.json"
    bad.write_text("this is not json")
    with pytest.raises(AscendifyError, match="not valid JSON"):
        compare(str(bad), str(tmp_path))
    g = gpu_trace(tmp_path / "gpu.json")
    (tmp_path / "empty_ascend_pt" / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (tmp_path / "empty_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").write_text("Name,Type,Duration(us)\n")
    with pytest.raises(AscendifyError, match="no trace_view.json"):
        compare(g, str(tmp_path / "empty_ascend_pt"))


def test_npu_side_of_the_sample_trace():
    ev, _ = read_trace(reference_path("data", "profiler", "trace_view_torch_npu.json"))
    ops = npu_op_times(ev)
    # device tasks reach the aten ops through the async_npu flows (274 pairs in the sample)
    assert "aten::mm" in ops and ops["aten::mm"]["device_us"] > 0
    assert len(ops) > 10
