"""Write the bundled profiler sample (synthetic data, made up here; no real profile is copied).

    python examples/profile_sample/make_sample.py      # rewrites demo-host_4242_20260501120000_ascend_pt/

The folder has the layout and headers of a torch_npu profiler run (``tensorboard_trace_handler``):
``{host}_{pid}_{timestamp}_ascend_pt/ASCEND_PROFILER_OUTPUT/`` with ``kernel_details.csv`` (Level0
header), ``step_trace_time.csv``, ``trace_view.json`` (bare Chrome-trace array, ``ts`` as strings),
``operator_details.csv`` and ``communication.json``, as torch_npu's profiler writers
(Ascend/pytorch ``torch_npu/profiler/analysis``, commit 9e73e708) write them.  The story: rank 0 of a 2-rank data-parallel fine-tune of a small
transformer (batch 32, sequence 128, hidden 768), 5 profiled steps, in which

* the data loader is slow in 3 of 5 steps (> 10 ms), so the device idles (host-bound, "Free" time);
* a float64 mask update runs as ``IndexPutV2`` on AI_CPU (DOUBLE;BOOL inputs), once per step;
* step 1 compiles 24 operators online (``AscendCL@aclopCompileAndExecute``);
* ``aten::unique2`` has host time and no device time (a CPU-fallback candidate);
* permute-contiguous-view, gelu and ``Optimizer.step#AdamW.step`` have fused torch_npu versions.
"""

from __future__ import annotations

import csv
import io
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(HERE, "demo-host_4242_20260501120000_ascend_pt", "ASCEND_PROFILER_OUTPUT")
T0 = 1777636800000000.0  # µs; 2026-05-01 12:00:00 UTC
STEPS = 5
STEP_US = [31000.0, 21500.0, 12400.0, 20800.0, 12600.0]  # wall time per step
LOADER_US = [14200.0, 12900.0, 3100.0, 12300.0, 2900.0]  # data loader per step (3 above 10 ms)

# (name stem, type, core, duration µs, input shapes, input dtypes, output shapes, output dtypes, count per step)
KERNELS = [
    ("MatMulV2", "MatMulV2", "AI_CORE", 412.6, '"4096,768;768,3072"', "FLOAT16;FLOAT16", '"4096,3072"', "FLOAT16", 4),
    ("MatMulV2", "MatMulV2", "AI_CORE", 186.2, '"4096,768;768,768"', "FLOAT16;FLOAT16", '"4096,768"', "FLOAT16", 6),
    ("BatchMatMulV2", "BatchMatMulV2", "AI_CORE", 148.9, '"384,128,64;384,64,128"', "FLOAT16;FLOAT16", '"384,128,128"', "FLOAT16", 4),
    ("LayerNormV3", "LayerNormV3", "AI_VECTOR_CORE", 41.3, '"32,128,768;768;768"', "FLOAT;FLOAT;FLOAT", '"32,128,768"', "FLOAT", 4),
    ("SoftmaxV2", "SoftmaxV2", "AI_VECTOR_CORE", 63.8, '"32,12,128,128"', "FLOAT16", '"32,12,128,128"', "FLOAT16", 2),
    ("Gelu", "Gelu", "AI_VECTOR_CORE", 35.4, '"32,128,3072"', "FLOAT16", '"32,128,3072"', "FLOAT16", 2),
    ("Add", "Add", "AI_VECTOR_CORE", 12.1, '"32,128,768;32,128,768"', "FLOAT16;FLOAT16", '"32,128,768"', "FLOAT16", 6),
    ("TransData", "TransData", "AI_VECTOR_CORE", 24.7, '"4096,768"', "FLOAT16", '"48,256,16,16"', "FLOAT16", 3),
    ("Cast", "Cast", "AI_VECTOR_CORE", 7.9, '"32,128"', "INT32", '"32,128"', "FLOAT16", 2),
    ("aclnnIndexPut_IndexPutV2", "IndexPutV2", "AI_CPU", 86.4, '"32,128;32,128"', "DOUBLE;BOOL", '"32,128"', "DOUBLE", 1),
    ("hcom_allReduce__424_0_1", "hcom_allReduce_", "HCCL", 918.5, "N/A", "N/A", "N/A", "N/A", 1),
]
HEADER = ("Step Id,Device_id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Num,"
          "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats")


def step_start(i: int) -> float:
    return T0 + sum(STEP_US[:i])


def kernel_details() -> str:
    out = io.StringIO()
    out.write(HEADER + "\n")
    w = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    for s in range(STEPS):
        t = step_start(s) + LOADER_US[s] + 150.0
        n = 0
        for stem, typ, core, dur, ish, idt, osh, odt, count in KERNELS:
            for k in range(count):
                n += 1
                d = round(dur * (1.0 + 0.01 * ((s * 7 + k * 3) % 5)), 2)  # small, fixed jitter
                name = stem if core == "HCCL" else f"{stem}_{n}"
                block = "N/A" if core == "HCCL" else ("1" if core == "AI_CPU" else ("20" if core == "AI_CORE" else "40"))
                fmt = "N/A" if core == "HCCL" else ";".join(["ND"] * (idt.count(";") + 1))
                ofmt = "N/A" if core == "HCCL" else "ND"
                w.writerow([s + 1, 0, name, typ, core, f"{t:.3f}\t", d, 0 if k == 0 else 1.2, block,
                            ish, idt, fmt, osh, odt, ofmt])
                t += d + 6.0
    # csv quotes the quoted shapes again ("""4096,768;768,3072"""), as the profiler writes them
    return out.getvalue()


def step_trace_time() -> str:
    rows = ["Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
            "Communication(Not Overlapped and Exclude Receive),Preparing"]
    computing = sum(d * c for _, _, core, d, *_rest, c in KERNELS if core != "HCCL")
    comm = KERNELS[-1][3]
    for s in range(STEPS):
        overlapped = 310.0
        not_ov = round(comm - overlapped, 2)
        comp = round(computing * (1.0 + 0.004 * s), 2)
        free = round(STEP_US[s] - comp - not_ov, 2)
        rows.append(f"0,{s + 1},{comp},{not_ov},{overlapped},{comm},{free},{STEP_US[s]},0,{not_ov},{LOADER_US[s]}")
    return "\n".join(rows) + "\n"


def _x(name, ts, dur, pid, tid, cat, **args):
    e = {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": f"{ts:.3f}", "dur": round(dur, 3), "cat": cat}
    if args:
        e["args"] = args
    return e


def trace_view() -> list:
    ev = [{"ph": "M", "name": "process_name", "pid": 4242, "tid": 0, "args": {"name": "Python"}},
          {"ph": "M", "name": "process_name", "pid": 4243, "tid": 0, "args": {"name": "CANN"}},
          {"ph": "M", "name": "process_name", "pid": 4244, "tid": 0, "args": {"name": "Ascend Hardware"}}]
    for s in range(STEPS):
        t = step_start(s)
        ev.append(_x(f"ProfilerStep#{s + 1}", t, STEP_US[s], 4242, 4242, "cpu_op"))
        ev.append(_x("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", t + 5, LOADER_US[s], 4242, 4242,
                     "python_function"))
        t += LOADER_US[s] + 20
        for op, dur in (("aten::to", 18), ("aten::embedding", 40), ("aten::permute", 9), ("aten::contiguous", 22),
                        ("aten::view", 4), ("aten::matmul", 55), ("aten::softmax", 30), ("aten::matmul", 52),
                        ("aten::gelu", 21), ("aten::layer_norm", 35), ("aten::unique2", 480),
                        ("aten::index_put_", 64), ("aten::add", 12)):
            ev.append(_x(op, t, dur, 4242, 4242, "cpu_op", **{"Sequence number": s * 100 + len(ev) % 97}))
            t += dur + 3
        ev.append(_x("autograd::engine::evaluate_function: MmBackward0", t, 900, 4242, 4250, "cpu_op"))
        t += 950
        ev.append(_x("Optimizer.step#AdamW.step", t, 1400, 4242, 4242, "python_function"))
        if s == 0:  # warm-up: operators compiled online
            for i in range(24):
                ev.append(_x("AscendCL@aclopCompileAndExecute", step_start(0) + LOADER_US[0] + 30 + 41 * i, 38.0,
                             4243, 4243, ""))
    return ev


def operator_details() -> str:
    head = ("Name,Input Shapes,Call Stack,Host Self Duration(us),Host Total Duration(us),Device Self Duration(us),"
            "Device Total Duration(us),Device Self Duration With AICore(us),Device Total Duration With AICore(us)")
    rows = [head]
    for s in range(STEPS):
        rows += [
            f'aten::unique2,"[[32, 128]]",train.py(61): train_step,{455 + 5 * s},{480 + 5 * s},0,0,0,0',
            f'aten::matmul,"[[32, 128, 768], [768, 3072]]",model.py(40): forward,38,55,0,{412.6 * 4:.1f},0,{412.6 * 4:.1f}',
            f'aten::index_put_,"[[32, 128], [32, 128], []]",train.py(58): smooth_labels,21,64,86.4,86.4,0,0',
            f'aten::view,"[[32, 128, 768]]",model.py(33): forward,4,4,0,0,0,0',
        ]
    return "\n".join(rows) + "\n"


def communication() -> dict:
    doc = {}
    for s in range(STEPS):
        doc[f"step{s + 1}"] = {"collective": {
            "hcom_allReduce__424_0_1@8071919201@1": {
                "Communication Time Info": {"Start Timestamp(us)": step_start(s) + 9000.0, "Elapse Time(ms)": 0.9185,
                                            "Transit Time(ms)": 0.5512, "Wait Time(ms)": 0.3104,
                                            "Synchronization Time(ms)": 0.0568, "Idle Time(ms)": 0.0569,
                                            "Wait Time Ratio": 0.3603, "Synchronization Time Ratio": 0.0934},
                "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 10.6, "Transit Time(ms)": 0.5512,
                                                          "Bandwidth(GB/s)": 19.231, "Large Packet Ratio": 1.0,
                                                          "Size Distribution": {"10.6": [1, 0.5512]}}}},
        }}
    return doc


def main() -> None:
    os.makedirs(RUN, exist_ok=True)
    files = {"kernel_details.csv": kernel_details(), "step_trace_time.csv": step_trace_time(),
             "trace_view.json": json.dumps(trace_view(), separators=(",", ":")) + "\n",
             "operator_details.csv": operator_details(),
             "communication.json": json.dumps(communication(), indent=1) + "\n"}
    for name, text in files.items():
        with open(os.path.join(RUN, name), "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        print(f"{name}: {len(text)} bytes")


if __name__ == "__main__":
    main()
