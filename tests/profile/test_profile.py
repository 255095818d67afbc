"""`ascendify profile` on the public sample files (vendored in tests/data/reference, read in place)
and on fixtures written here from the documented formats (accuracy-profiling-atc.md §4)."""

from __future__ import annotations

import json
import os
import shutil
import xml.dom.minidom

import pytest
from click.testing import CliRunner

from ascendify.cli import cli
from ascendify.errors import AscendifyError
from ascendify.profile.analyze import analyze, compile_pattern, fusion_rules
from ascendify.profile.cli import render_text
from ascendify.profile.reader import norm_column, read_trace
from tests.conftest import reference_path


def sample(name: str) -> str:
    """A vendored profiler sample (tests/data/reference/data/profiler/); a missing one fails the test."""
    return reference_path("data", "profiler", name)


def run_dir(tmp_path, **files) -> str:
    """A `<x>_ascend_pt/ASCEND_PROFILER_OUTPUT/` folder holding ``files`` (name → text/bytes or a sample path)."""
    out = tmp_path / "host_1_20260501_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    for name, content in files.items():
        name = name.replace("__", ".")
        p = out / name
        if isinstance(content, bytes):
            p.write_bytes(content)
        elif "\n" not in content and os.path.isfile(content):
            shutil.copy(content, p)
        else:
            p.write_text(content, encoding="utf-8")
    return str(out.parent)


def test_sample_aicpu_and_hccl_share(tmp_path):
    d = run_dir(tmp_path, kernel_details__csv=sample("kernel_details_with_aicpu_hccl.csv"))
    k = analyze(d)["kernels"]
    # Checked by hand against the file (column 7 = Accelerator Core, column 9 = Duration(us);
    # `awk -F, 'NR>1{s+=$9; if($7=="HCCL")h+=$9; if($7=="AI_CPU")a+=$9}'`):
    # AI_CPU rows (file lines 31, 43, 51, 62, 71, 86, 94), all Type Cast, INT32 -> UINT64:
    #   197.54 + 112.88 + 101.04 + 105.6 + 92.7 + 101.46 + 73.96 = 785.18 us, max 197.54
    assert [(a["op_type"], a["input_dtypes"], a["output_dtypes"], a["count"]) for a in k["aicpu"]] == [("Cast", "INT32", "UINT64", 7)]
    a = k["aicpu"][0]
    assert a["total_us"] == pytest.approx(785.18)
    assert a["max_us"] == pytest.approx(197.54)
    assert sorted(a["names"]) == ["trans_Cast_18", "trans_Cast_5"]
    assert a["above_advisor_threshold"] is True  # some task > 20 us
    assert a["reason"]  # from the KB, or the 64-bit integer dtype hint
    # HCCL rows (19): 308926.68 + 62.94 + 1470.84 + 3360.4 + 2833.82 + 6328.78 + 2804.14 + 93.32
    #   + 2890.44 + 1147.68 + 5.84 + 4614.42 + 3585.86 + 5.78 + 32.2 + 4628.6 + 3132.44 + 176.04 + 298.52
    #   = 346398.74 us; all 591 rows sum to 396807.04 us → share 346398.74 / 396807.04 = 0.8729652
    assert k["rows"] == 591
    assert k["hccl_us"] == pytest.approx(346398.74)
    assert k["total_us"] == pytest.approx(396807.04)
    assert k["hccl_share"] == pytest.approx(0.8729652, abs=1e-6)
    assert k["by_core"]["AI_CPU"]["total_us"] == pytest.approx(785.18)
    assert [h["op_type"] for h in k["hccl_ops"]][:2] == ["hcom_broadcast_", "hcom_allReduce_"]
    assert all("HCCL" not in t["core_types"] for t in k["top_ops"])  # communication excluded from the compute ranking
    assert k["op_state"] is None  # this older header has no OP State column


def test_sample_cli_text_lists_aicpu(tmp_path):
    d = run_dir(tmp_path, kernel_details__csv=sample("kernel_details_with_aicpu_hccl.csv"))
    r = CliRunner().invoke(cli, ["profile", d], standalone_mode=False)
    assert r.exception is None, r.output
    assert "Cast INT32 → UINT64: ×7, 785.2 µs" in r.output
    assert "HCCL (communication) 346.40 ms = 87.3%" in r.output
    r = CliRunner().invoke(cli, ["profile", "analyze", "--format", "json", os.path.join(d, "ASCEND_PROFILER_OUTPUT")], standalone_mode=False)
    assert json.loads(r.output)["kernels"]["aicpu"][0]["count"] == 7


def test_sample_level1_dynamic_shapes_and_tab_padded_times(tmp_path):
    d = run_dir(tmp_path, kernel_details__csv=sample("kernel_details_level1_bf16_matmul.csv"))
    rep = analyze(d)
    k = rep["kernels"]
    assert k["rows"] == 29 and k["op_state"] == {"static": 0, "dynamic": 29, "other": 0}
    assert rep["dynamic_shape"]["no_static_ops"] is True
    assert "jit_compile=False" in rep["dynamic_shape"]["advice"]
    assert any(s["area"] == "dynamic-shape" for s in rep["suggestions"])
    assert k["aicpu"] == []


def test_sample_trace_view(tmp_path):
    events, notes = read_trace(sample("trace_view_torch_npu.json"))
    assert len(events) == 3670 and notes == []
    d = run_dir(tmp_path, trace_view__json=sample("trace_view_torch_npu.json"))
    rep = analyze(d)
    tr = rep["trace"]
    # 11 AscendCL@aclopCompileAndExecute events: below the advisor's 20 → no compile storm
    assert tr["online_compiles"] == 11 and rep["dynamic_shape"]["compile_storm"] is False
    assert tr["dataloader"]["calls"] == 2 and tr["dataloader"]["starving"] is False
    assert [f["api"] for f in tr["fusion"]] == ["torch_npu.optim.NpuFusedAdam"]  # Optimizer.step#Adam.step
    st = rep["step_time"]  # no step_trace_time.csv: from the Overlap Analysis lanes
    assert st["source"].startswith("trace_view.json") and st["bound"] == "free"


def test_sample_cluster_step_trace(tmp_path):
    d = run_dir(tmp_path, step_trace_time__csv=sample("cluster_step_trace_time.csv"))
    st = analyze(d)["step_time"]
    # 8 rank rows; the "stage" aggregate row is left out
    assert [s["step"] for s in st["steps"]] == [f"rank {i}" for i in range(8)]
    # mean Free = (990605.10 + 1488610.06 + 1110332.12 + 1366552.52 + 1130793.25 + 892836.90
    #              + 1390633.03 + 1061577.09) / 8 = 9431940.07 / 8 = 1178992.51
    assert st["mean_us"]["free"] == pytest.approx(1178992.51, abs=0.01)
    assert st["bound"] == "free"
    # largest Communication(Not Overlapped): rank 5 (756374.86); largest Free: rank 1 (1488610.06)
    assert st["slowest"]["communication_not_overlapped"] == "rank 5" and st["slowest"]["free"] == "rank 1"


def test_sample_cluster_communication(tmp_path):
    d = run_dir(tmp_path, communication__json=sample("cluster_communication.json"))
    cm = analyze(d)["communication"]
    assert cm["ops"] and cm["ops"][0]["op"].startswith("hcom_")
    assert 0.0 <= cm["wait_ratio"] <= 1.0


STEP_TRACE = """Step,Computing,Communication (Not Overlapped),Overlapped,Communication,Free,Stage,Bubble
1,900,50,10,60,50,1000,0
2,\t700\t,250,"40",290,50,1000,N/A
3,600,350,40,390,50,1000,0
"""


def test_step_trace_header_variant_and_split(tmp_path):
    d = run_dir(tmp_path, step_trace_time__csv=STEP_TRACE)
    st = analyze(d, skip_first_step=True)["step_time"]
    # steps 2 and 3: computing (700+600)/2 = 650, comm not overlapped (250+350)/2 = 300, free 50, stage 1000
    assert st["mean_us"]["computing"] == 650 and st["mean_us"]["communication_not_overlapped"] == 300
    assert st["shares"] == {"computing": 0.65, "communication_not_overlapped": 0.3, "overlapped": 0.04, "free": 0.05}
    assert st["bound"] == "compute"
    st = analyze(d)["step_time"]
    assert st["steps_used"] == 3


KD_OWN = '''Step Id,Device_id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Num,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,OP State,Future Column
1,0,aclnnIndexPut_1,IndexPutV2,AI_CPU,"100.5\t",30,0,1,"""4,4;4""",DOUBLE;BOOL,ND;ND,"""4,4""",DOUBLE,ND,static,x
1,0,MatMul_1,MatMulV2,AI_CORE,"200.5\t",70,0,20,"""4,4;4,4""",FLOAT16;FLOAT16,ND;ND,"""4,4""",FLOAT16,ND,dynamic,x
1,0,hcom_allReduce__1,hcom_allReduce_,HCCL,"300.5\t",100,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,x
1,0,Add_2,Add,AI_VECTOR_CORE,"400.5\t"
'''


def test_own_kernel_details_with_truncated_row_and_unknown_column(tmp_path):
    d = run_dir(tmp_path, kernel_details__csv=KD_OWN)
    rep = analyze(d)
    k = rep["kernels"]
    # the truncated Add row has no duration: counted, not summed; total = 30 + 70 + 100 = 200
    assert k["rows"] == 3 and k["rows_without_duration"] == 1 and k["total_us"] == 200
    assert k["hccl_share"] == 0.5
    a = k["aicpu"][0]
    assert (a["op_type"], a["input_dtypes"], a["share"]) == ("IndexPutV2", "DOUBLE;BOOL", 0.15)
    assert "double" in a["reason"].lower() or "float64" in a["reason"]
    assert "index_put" in a["suggestion"]  # advisor op-specific guidance for indexputv2
    sug = next(x for x in rep["suggestions"] if x["area"] == "aicpu")
    assert sug["scan_rules"] == ["DTY001", "DTY002", "DTY003", "DYN002", "DYN003", "DYN004"]
    assert k["op_state"] == {"static": 1, "dynamic": 1, "other": 1}
    assert rep["dynamic_shape"]["dynamic"] is False
    assert any("fewer fields than the header" in n for n in rep["notes"])


def test_op_statistic_only(tmp_path):
    ops = ("Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
           "0,MatMulV2,AI_CORE,10,600,50,60,70,60\n0,NonZero,AI_CPU,2,300,100,150,200,30\n0,hcom_allReduce_,HCCL,1,100,100,100,100,10\n")
    rep = analyze(run_dir(tmp_path, op_statistic__csv=ops))
    k = rep["kernels"]
    assert [t["op_type"] for t in k["top_ops"]] == ["MatMulV2", "NonZero"]
    assert k["top_ops"][0]["share"] == 0.6 and k["hccl_share"] == 0.1
    assert k["aicpu"][0]["op_type"] == "NonZero" and "nonzero" in k["aicpu"][0]["suggestion"]
    text = render_text(rep)
    assert "MatMulV2" in text and "NonZero: ×2" in text


def _x(name, ts, dur, pid=1, tid=1, cat="cpu_op", **args):
    return {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": str(ts), "dur": dur, "cat": cat, "args": args}


def test_trace_fusion_dataloader_and_compile_storm(tmp_path):
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "Python"}}]
    t = 0.0
    for step in range(3):
        ev.append(_x("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", t, 25000.0))
        t += 25000
        for op in ("matmul", "div", "softmax", "matmul", "permute", "contiguous", "view", "gelu"):
            ev.append(_x(f"aten::{op}", t, 10.0))
            ev.append(_x("aten::mm" if op == "matmul" else "aten::empty", t + 1, 2.0))  # nested: not top level
            t += 20
    ev += [_x("AscendCL@aclopCompileAndExecute", 10 * i, 1.0, tid=2, cat="") for i in range(25)]
    rep = analyze(run_dir(tmp_path, trace_view__json=json.dumps(ev)))
    tr = rep["trace"]
    fus = {f["api"]: f["count"] for f in tr["fusion"]}
    # matmul-div-softmax-matmul is not an advisor pattern (div is not in it); permute-contiguous-view and gelu are
    assert fus == {"torch_npu.npu_confusion_transpose": 3, "torch_npu.fast_gelu": 3}
    assert tr["dataloader"]["starving"] is True and tr["dataloader"]["slow_calls"] == 3
    assert rep["dynamic_shape"]["compile_storm"] is True and tr["online_compiles"] == 25
    text = render_text(rep)
    assert "3 above 10.00 ms → the device waits for data" in text and "scan: MEM002, MEM006" in text
    areas = {s["area"]: s for s in rep["suggestions"]}
    assert "fusion" in areas
    assert areas["dataloader"]["scan_rules"] == ["MEM002", "MEM006"]
    assert "DYN002" in areas["dynamic-shape"]["scan_rules"]


def test_fusion_pattern_compiler():
    rx = compile_pattern("(permute)-(contiguous){0,1}-(view)")
    assert len(rx.findall("permute;view;permute;contiguous;view;")) == 2
    assert rx.findall("xpermute;view;") == []  # op-name boundary
    with pytest.raises(ValueError):
        compile_pattern("(a|b)+")
    assert len(fusion_rules()) > 30


def test_every_scan_rule_in_the_advice_exists():
    from ascendify.profile.analyze import advice
    from ascendify.rules.registry import load_rules

    rules = load_rules()

    def codes(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k.startswith("rules"):
                    yield from v
                else:
                    yield from codes(v)

    referenced = set(codes(advice()))
    assert referenced and sorted(c for c in referenced if c not in rules) == []


def test_norm_column():
    assert norm_column("Task Duration(us)") == "task_duration"
    assert norm_column("Duration(us)") == "task_duration"
    assert norm_column("Accelerator Core") == "task_type"
    assert norm_column("Communication(Not Overlapped)") == norm_column("Communication (Not Overlapped)") == "communication_not_overlapped"
    assert norm_column("Block Dim") == norm_column("Block Num") == "block_num"
    assert norm_column("\ufeffStep Id") == "step_id"


def test_bad_inputs(tmp_path):
    with pytest.raises(AscendifyError, match="no profiler data found"):
        analyze(str(tmp_path))
    with pytest.raises(AscendifyError, match="no such folder"):
        analyze(str(tmp_path / "nope"))
    d = run_dir(tmp_path, kernel_details__csv="", trace_view__json=b'[{"ph": "X", "name": "aten::add", "ts": "1", "dur": 2}, {"ph": "X", "na',
                step_trace_time__csv=b"\x00\x01\x02\xff\xfe garbage \x00" * 20)
    rep = analyze(d)
    notes = " | ".join(rep["notes"])
    assert "kernel_details.csv: empty file" in notes
    assert "truncated or corrupt; read the first 1 event(s)" in notes
    assert "step_trace_time.csv: not a recognised profiler CSV" in notes
    assert rep["trace"]["events"] == 1  # partial results still reported
    assert "note: " in render_text(rep)
    (tmp_path / "a_ascend_pt").mkdir()
    (tmp_path / "b_ascend_pt").mkdir()
    with pytest.raises(AscendifyError, match="holds 3 profiler runs"):
        analyze(str(tmp_path))


def test_cli_errors_are_one_line(tmp_path):
    r = CliRunner().invoke(cli, ["profile", str(tmp_path / "none")], standalone_mode=False)
    assert isinstance(r.exception, AscendifyError)


def test_chart_svg_and_png(tmp_path):
    d = run_dir(tmp_path, kernel_details__csv=KD_OWN, step_trace_time__csv=STEP_TRACE)
    svg = tmp_path / "c.svg"
    r = CliRunner().invoke(cli, ["profile", d, "--plot", str(svg)], standalone_mode=False)
    assert r.exception is None
    doc = xml.dom.minidom.parse(str(svg))
    texts = " ".join(t.firstChild.data for t in doc.getElementsByTagName("text") if t.firstChild)
    assert "MatMulV2" in texts and "HCCL (communication)" in texts and "compute 73.3%" in texts
    pytest.importorskip("matplotlib")
    png = tmp_path / "c.png"
    r = CliRunner().invoke(cli, ["profile", d, "--plot", str(png)], standalone_mode=False)
    assert r.exception is None and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = CliRunner().invoke(cli, ["profile", d, "--plot", str(tmp_path / "c.gif")], standalone_mode=False)
    assert isinstance(r.exception, AscendifyError)


def test_msprof_layout_op_summary(tmp_path):
    out = tmp_path / "PROF_000001_20260501101010_ABCDEF" / "mindstudio_profiler_output"
    out.mkdir(parents=True)
    (out / "op_summary_20260501101010.csv").write_text(
        "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Num\n"
        "0,1,1,2,Conv2D_1,Conv2D,static,AI_CORE,10\t,80,0,32\n"
        "0,1,2,2,Where_3,Where,static,AI_CPU,95\t,20,0,1\n"
    )
    rep = analyze(str(tmp_path))
    k = rep["kernels"]
    assert k["source"].endswith("op_summary_20260501101010.csv")
    assert [t["op_type"] for t in k["top_ops"]] == ["Conv2D", "Where"] and k["top_ops"][0]["share"] == 0.8
    assert k["aicpu"][0]["op_type"] == "Where" and k["aicpu"][0]["above_advisor_threshold"] is False  # 20 us is not > 20
    assert rep["dynamic_shape"]["dynamic"] is False


def test_own_communication_json_with_na(tmp_path):
    doc = {"step1": {"collective": {
        "hcom_allReduce__123_0@8071919201@1": {
            "Communication Time Info": {"Start Timestamp(us)": 1.0, "Elapse Time(ms)": 10.0, "Transit Time(ms)": 2.0,
                                        "Wait Time(ms)": 8.0, "Synchronization Time(ms)": 1.0, "Idle Time(ms)": 0.0},
            "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 100.0, "Transit Time(ms)": 5.0, "Bandwidth(GB/s)": 20.0}}},
        "hcom_broadcast__9_0@8071919201@1": {
            "Communication Time Info": {"Elapse Time(ms)": "N/A", "Wait Time(ms)": None}},
        "Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 999.0}}}}}
    cm = analyze(run_dir(tmp_path, communication__json=json.dumps(doc)))["communication"]
    # Total Op Info is a summary, not an op: elapsed 10 ms, wait 8 ms → 80 % waiting
    assert cm["elapse_ms"] == 10.0 and cm["wait_ratio"] == 0.8
    assert [o["op"] for o in cm["ops"]] == ["hcom_allReduce__123_0", "hcom_broadcast__9_0"]
    assert cm["bandwidth_gb_s"] == {"HCCS": 20.0}  # 100 MB / 5 ms
    assert "waiting for other ranks" in cm["advice"]


def test_cpu_fallback_candidates_from_operator_details(tmp_path):
    od = ("Name,Input Shapes,Call Stack,Host Self Duration(us),Host Total Duration(us),Device Self Duration(us),Device Total Duration(us),"
          "Device Self Duration With AICore(us),Device Total Duration With AICore(us)\n"
          'aten::unique2,"[[1024]]",train.py(40),900,1500,0,0,0,0\n'
          'aten::unique2,"[[1024]]",train.py(40),800,1300,0,0,0,0\n'
          'aten::view,"[[1024]]",train.py(41),5,500,0,0,0,0\n'        # view-like: never a fallback
          'aten::matmul,"[[8,8]]",train.py(42),30,60,10,12,10,12\n'   # has device time
          'aten::eq,"[[8]]",train.py(43),20,40,0,N/A,0,0\n')         # below 100 us host time
    rep = analyze(run_dir(tmp_path, operator_details__csv=od))
    assert rep["cpu_fallback"] == [{"op": "aten::unique2", "calls": 2, "host_us": 2800.0}]
    s = next(x for x in rep["suggestions"] if x["area"] == "cpu-fallback")
    assert s["scan_rules"] == ["OPS001", "OPS002"] and "TORCH_NPU_FALLBACK_CPU_DISABLE=1" in s["change"]


def test_plot_line_on_stderr(tmp_path):
    from tests.cli_util import run_cli

    d = run_dir(tmp_path, kernel_details__csv=KD_OWN, step_trace_time__csv=STEP_TRACE)
    svg = tmp_path / "c.svg"
    r = run_cli("profile", d, "--plot", str(svg), "--format", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["chart"] == str(svg)
    assert r.err.strip().splitlines()[-1] == f"plot: {svg}" and "plot:" not in r.out
