"""Ranking, streaming, bounded memory, inputs and the CLI of `ascendify diagnose`."""

from __future__ import annotations

import codecs
import gzip
import json
import tracemalloc

import pytest
from click.testing import CliRunner

from ascendify.cli import cli
from ascendify.diagnose.engine import KEYS_PER_SIGNATURE, diagnose
from ascendify.diagnose.scanner import BLOCK, FileStats, Scanner, rank_from_path
from ascendify.errors import AscendifyError
from tests.diagnose.generated_log import GeneratedLog

OOM = ("RuntimeError: NPU out of memory. Tried to allocate 260.00 MiB (NPU 0; 28.50 GiB total capacity; 10.24 GiB already "
       "allocated; 10.24 GiB current active; 149.57 MiB free; 10.28 GiB reserved in total by PyTorch)")

RANK0 = f"""\
2026-05-01 10:00:00,001 INFO step 1 loss 2.31
Traceback (most recent call last):
  File "/srv/demo/train.py", line 88, in <module>
    loss = model(batch)
  File "/opt/venv/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl
    return forward_call(*args, **kwargs)
{OOM}
[ERROR] 2026-05-01-10:05:12 (PID:4242, Device:0, RankID:0) ERR00006 PTA memory error
"""

RANK1 = """\
2026-05-01 10:00:00,002 INFO step 1 loss 2.29
[ERROR] HCCL(4243,python3):2026-05-01-10:35:48.123.456 [notify.cc:12]4250 EI0002: The wait execution of the Notify register times out.
[ERROR] 2026-05-01-10:35:49 (PID:4243, Device:1, RankID:1) ERR02200 DIST call hccl api failed.
EZ9999: Inner Error!
"""


@pytest.fixture()
def two_ranks(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    # the consequence rank is written (and read) first
    (d / "a_rank_1.log").write_text(RANK1)
    (d / "b_rank_0.log").write_text(RANK0)
    return d


def test_root_cause_ranks_before_consequences(two_ranks):
    rep = diagnose((str(two_ranks),))
    ids = [f.id for f in rep.findings]
    assert ids[0] == "npu-oom"
    # rank 1's EI0002 line, its ERR02200 suffix and the EZ9999 line are one error block: the wrappers are
    # folded into the HCCL finding, and rank 0's ERR00006 suffix into the OOM
    assert ids == ["npu-oom", "hccl-exec-timeout"]
    hccl = rep.findings[1]
    wrapped = " ".join(hccl.details["wrapped_codes"])
    assert "ERR02200" in wrapped and "EZ9999" in wrapped and [e.line for e in hccl.evidence] == [2, 3, 4]
    assert "ERR00006" in " ".join(rep.findings[0].details["wrapped_codes"])
    root = rep.findings[0]
    assert root.ranks == {0} and root.evidence[0].line == 7
    assert root.frame == {"path": "/srv/demo/train.py", "line": 88, "function": "<module>"}
    hccl = next(f for f in rep.findings if f.id == "hccl-exec-timeout")
    assert hccl.ranks == {1} and hccl.consequence_of == "npu-oom"
    assert rep.first_error().id == "npu-oom"
    d = rep.to_dict()
    assert d["summary"]["root_cause"] == "npu-oom"
    assert d["summary"]["first_error"]["file"].endswith("b_rank_0.log")


def test_earliest_cause_first_across_ranks(tmp_path):
    (tmp_path / "rank_0.log").write_text("[ERROR] 2026-05-01-10:00:09 (PID:1, Device:0, RankID:0) x\nImportError: x.so: undefined symbol: Foo\n")
    (tmp_path / "rank_1.log").write_text("[ERROR] 2026-05-01-10:00:01 (PID:2, Device:1, RankID:1) y\nOSError: libhccl.so: cannot open shared object file: No such file\n")
    rep = diagnose((str(tmp_path),))
    assert [f.id for f in rep.findings][:2] == ["missing-library", "undefined-symbol"]


def test_text_and_json_cli(two_ranks):
    r = CliRunner().invoke(cli, ["diagnose", str(two_ranks)], standalone_mode=False)
    assert r.exception is None and r.return_value == 1
    assert "1. [error] NPU out of memory" in r.output
    assert "held outside PyTorch = total − reserved − free = 28.50 GiB − 10.28 GiB − 149.57 MiB = 18.07 GiB" in r.output
    r = CliRunner().invoke(cli, ["diagnose", "--format", "json", str(two_ranks)], standalone_mode=False)
    doc = json.loads(r.output)
    f0 = doc["findings"][0]
    assert f0["id"] == "npu-oom" and f0["order"] == 1
    assert f0["details"]["verdict"] == "memory held outside PyTorch"
    assert f0["details"]["requested"] == 260.0 and f0["details"]["reserved"] == pytest.approx(10526.72)
    assert f0["evidence"][0]["line"] == 7 and f0["evidence"][0]["rank"] == 0


def test_exit_code_zero_without_errors(tmp_path):
    p = tmp_path / "ok.log"
    p.write_text("all good\nstep 2 loss 1.0\n")
    r = CliRunner().invoke(cli, ["diagnose", str(p)], standalone_mode=False)
    assert r.return_value == 0 and "No known error" in r.output
    p.write_text("CAUTION: The operator 'aten::foo' is not currently supported on the NPU backend and will fall back to run on the CPU.\n")
    r = CliRunner().invoke(cli, ["diagnose", str(p)], standalone_mode=False)
    assert r.return_value == 0  # a warning only
    r = CliRunner().invoke(cli, ["diagnose", "--fail-on", "warning", str(p)], standalone_mode=False)
    assert r.return_value == 1


def test_stdin():
    r = CliRunner().invoke(cli, ["diagnose", "-"], input="AssertionError: Torch not compiled with CUDA enabled\n", standalone_mode=False)
    assert r.return_value == 1 and "CUDA call on an NPU host" in r.output and "<stdin>:1" in r.output


def test_scan_rule_named_for_code_causes():
    r = CliRunner().invoke(cli, ["diagnose", "--format", "json", "-"], input="AssertionError: Torch not compiled with CUDA enabled\n", standalone_mode=False)
    f = json.loads(r.output)["findings"][0]
    assert [x["code"] for x in f["scan_rules"]][:3] == ["DEV001", "DEV002", "DEV003"]
    r = CliRunner().invoke(cli, ["diagnose", "-"], input="ModuleNotFoundError: No module named 'flash_attn'\n", standalone_mode=False)
    assert "CUDA-only package missing on the NPU host: flash_attn" in r.output and "EXT003 (flash-attn)" in r.output


def test_bad_inputs(tmp_path):
    with pytest.raises(AscendifyError, match="no such file"):
        diagnose((str(tmp_path / "missing.log"),))
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "junk.bin.log").write_bytes(b"\x00\x01\x02" * 5000)
    mixed = ("中文日志 开始\n".encode("gbk") + b"caf\xe9 latin-1 line\n"
             + "EI0006: Getting socket times out. 连接超时\n".encode("gb18030"))
    (tmp_path / "mixed.log").write_bytes(mixed)
    rep = diagnose((str(tmp_path),))
    assert [f.id for f in rep.findings] == ["hccl-connect-timeout"]
    assert rep.findings[0].evidence[0].line == 3
    assert "连接超时" in rep.findings[0].evidence[0].text
    notes = " ".join(rep.notes)
    assert "empty.log: empty file" in notes and "junk.bin.log: looks binary" in notes


def test_utf16_log_from_windows(tmp_path):
    text = "step 1\r\n训练开始\r\nEI0006: Getting socket times out.\r\n"
    (tmp_path / "ps_rank_2.log").write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    (tmp_path / "nobom_rank_3.log").write_bytes(text.encode("utf-16-le"))
    rep = diagnose((str(tmp_path),))
    f = rep.findings[0]
    assert f.id == "hccl-connect-timeout" and f.ranks == {2, 3} and f.count == 2
    assert [e.line for e in f.evidence] == [3, 3]
    assert rep.notes == []


def test_gzip_and_long_lines(tmp_path):
    p = tmp_path / "rank3.log.gz"
    with gzip.open(p, "wb") as fh:
        fh.write(b"x" * (3 * BLOCK) + b" error code is 207001 " + b"y" * BLOCK + b"\n")  # one 4 MiB line, a code deep inside
        fh.write(b"EL0004: Failed to allocate memory requested by HCCL module.\n")
    rep = diagnose((str(p),))
    # both are causes without timestamps: reading order decides
    assert [f.id for f in rep.findings] == ["acl-207001", "cann-oom"]
    assert rep.findings[0].evidence[0].line == 1 and len(rep.findings[0].evidence[0].text) <= 8192
    assert rep.findings[1].evidence[0].line == 2 and rep.findings[1].ranks == {3}


def test_rank_from_path():
    assert rank_from_path("logs/rank_3.log") == 3
    assert rank_from_path("job/node0_rank7.txt") == 7
    assert rank_from_path("worker-12/out.log") == 12
    assert rank_from_path("plog/plog-4242_20260501.log") is None


class _Synthetic(GeneratedLog):
    """A generated log of ``size`` bytes: a normal line repeated, and every ``every``-th line a
    CPU-fallback line with a new op name."""

    def __init__(self, size: int, every: int):
        super().__init__(size)
        self.every = every

    def _next(self) -> bytes:
        if self.n % self.every == 0:
            return (f"CAUTION: The operator 'aten::op{self.n}' is not currently supported on the NPU "
                    f"backend and will fall back to run on the CPU.\n").encode()
        return f"2026-05-01 10:00:00,000 INFO step {self.n} loss 0.123 lr 1e-4 throughput 812.5\n".encode()


def _scan_synthetic(size: int, every: int):
    from ascendify.diagnose.engine import Aggregator
    from ascendify.diagnose.signatures import load

    kb = load()  # loaded (and cached) before measuring
    tracemalloc.start()
    src = _Synthetic(size, every)
    agg = Aggregator(kb)
    stats = FileStats("synthetic")
    for hit in Scanner().scan_stream(src, "synthetic", stats, None):
        agg.add(hit)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return src, agg.result(), stats, peak


def test_memory_bounded_and_line_numbers():
    every = 211
    _, _, _, small_peak = _scan_synthetic(2 * BLOCK, every)
    src, findings, stats, peak = _scan_synthetic(10 * BLOCK, every)  # 5x the log
    # bounded: distinct keys are capped, so findings do not grow with the log
    assert len(findings) == KEYS_PER_SIGNATURE + 1
    other = next(f for f in findings if f.key == "(other)")
    first = next(f for f in findings if f.key == f"aten::op{every}")
    assert first.evidence[0].line == every  # line numbers survive block boundaries
    assert sum(f.count for f in findings) == src.n // every
    assert other.count == src.n // every - KEYS_PER_SIGNATURE
    assert stats.lines == src.n
    # peak Python allocations: a few 1 MiB blocks, independent of the log size
    assert peak < 8 * BLOCK, peak
    # 5x the log adds at most ~one block of slack (allocator noise differs between Pythons);
    # memory that grew with the log would add about 8 blocks here
    assert peak - small_peak < 2 * BLOCK, (small_peak, peak)


def test_plog_folder_first_error_in_time(tmp_path):
    plog = tmp_path / "ascend" / "log" / "debug" / "plog"
    plog.mkdir(parents=True)
    # format of research notes §5.6: [ERROR] MODULE(pid,process):YYYY-MM-DD-hh:mm:ss.mmm.uuu [file.cc:line]tid func: msg
    (plog / "plog-100_20260501100000.log").write_text(
        "[INFO] GE(100,python3):2026-05-01-10:00:00.000.001 [graph.cc:10]101 Build: start\n"
        "[ERROR] RUNTIME(100,python3):2026-05-01-10:00:09.500.000 [stream.cc:88]101 Sync: EE1002: Stream synchronize timeout.\n")
    (plog / "plog-200_20260501100000.log").write_text(
        "[ERROR] RUNTIME(200,python3):2026-05-01-10:00:03.250.100 [task.cc:1]201 Report: Aicore kernel execute failed, "
        "ret=507015, aicore exception fault kernel_name=IndexPut_9f3a_mix_aiv\n"
        "[ERROR] RUNTIME(200,python3):2026-05-01-10:00:03.250.200 [api.cc:2]201 Wrap: EE9999: Inner Error!\n")
    rep = diagnose((str(plog),))
    ids = [f.id for f in rep.findings]
    # EE9999 is printed in the same block as the AI Core exception: folded into it, not a finding of its own
    assert ids == ["aicore-exception", "cann-EE1002"]
    assert "EE9999" in " ".join(rep.findings[0].details["wrapped_codes"])
    assert rep.findings[0].key == "IndexPut_9f3a_mix_aiv"
    assert "ASCEND_LAUNCH_BLOCKING=1" in rep.findings[0].next_step
    assert rep.first_error().evidence[0].file.endswith("plog-200_20260501100000.log")


def test_atc_console_cause_before_wrapper(tmp_path):
    p = tmp_path / "atc.log"
    p.write_text(
        "ATC start working now, please wait for a moment.\n"
        "ATC run failed, Please check the detail log, Try 'atc --help' for more information\n"
        "E19010: No parser is registered for Op [GridSample_42, optype [GridSample].\n"
        "        Solution: Check the version of the installation package and reinstall the package.\n")
    rep = diagnose((str(p),))
    # "ATC run failed" wraps the E19010 line right after it: one finding for the block
    assert [f.id for f in rep.findings] == ["atc-unsupported-op"]
    assert rep.findings[0].details["wrapped_codes"] == ["atc-failed"] and [e.line for e in rep.findings[0].evidence] == [3, 2]
    assert rep.findings[0].key == "GridSample_42" and [r["code"] for r in rep.findings[0].to_dict()["scan_rules"]] == ["DYN007"]
