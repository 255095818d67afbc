"""Multi-rank logs: the first failure in time is the cause, timeouts on other ranks after it are its consequences,
and unrelated failures on other ranks are not blamed on it.  Logs written for these tests in the shape of
torchrun / torch_npu / CANN output (no copied logs)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ascendify.cli import cli
from ascendify.diagnose.engine import diagnose


def _oom(rank: int, when: str) -> str:
    return (
        f"[rank{rank}]:{when} INFO step 120 loss 2.113\n"
        f"[rank{rank}]:Traceback (most recent call last):\n"
        f'[rank{rank}]:  File "/home/u/proj/train.py", line 141, in <module>\n'
        f"[rank{rank}]:    main()\n"
        f'[rank{rank}]:  File "/home/u/proj/train.py", line 120, in main\n'
        f"[rank{rank}]:    out = model(**batch)\n"
        f'[rank{rank}]:  File "/usr/local/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1518, in _wrapped_call_impl\n'
        f"[rank{rank}]:    return self._call_impl(*args, **kwargs)\n"
        f"[rank{rank}]:RuntimeError: NPU out of memory. Tried to allocate 1.20 GiB (NPU {rank}; 60.00 GiB total capacity; "
        "57.10 GiB already allocated; 57.30 GiB current active; 400.00 MiB free; 58.00 GiB reserved in total by PyTorch)\n"
    )


def _hccl_timeout(rank: int, minute: int) -> str:
    return (
        f"[rank{rank}]:2026-05-01 10:00:00,120 INFO step 120 loss 2.101\n"
        f"[rank{rank}]:[E501 10:{minute:02d}:37.812345 ProcessGroupHCCL.cpp:590] [Rank {rank}] Watchdog caught collective "
        "operation timeout: WorkHCCL(SeqNum=5521, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800012 milliseconds before timing out.\n"
        f"[ERROR] HCCL(42{rank}3,python3):2026-05-01-10:{minute:02d}:38.123.456 [notify.cc:12]4250 EI0002: The wait execution "
        "of the Notify register times out.\n"
    )


def _by_id(rep, prefix):
    return [f for f in rep.findings if f.id.startswith(prefix)]


def test_first_failure_on_one_rank_timeouts_on_the_others(tmp_path):
    (tmp_path / "rank_2.log").write_text(_oom(2, "2026-05-01 10:00:00,100"))
    for r in (0, 1, 3):  # read before rank 2 (sorted names), and 30 minutes later in time
        (tmp_path / f"rank_{r}.log").write_text(_hccl_timeout(r, 30))
    rep = diagnose((str(tmp_path),))
    root = rep.findings[0]
    assert root.id == "npu-oom" and root.ranks == {2} and root.role == "cause"
    assert root.frame == {"path": "/home/u/proj/train.py", "line": 120, "function": "main"}
    assert root.exception == {"type": "RuntimeError", "message": root.exception["message"]}
    consequences = [f for f in rep.findings[1:] if f.severity == "error"]
    assert consequences, [f.id for f in rep.findings]
    for f in consequences:
        assert f.role in ("consequence", "wrapper") and f.consequence_of == "npu-oom", (f.id, f.role, f.consequence_of)
        assert f.ranks == {0, 1, 3}
    assert rep.first_failure() is root
    ff = rep.to_dict()["summary"]["first_failure"]
    assert ff["rank"] == 2 and ff["finding"] == "npu-oom" and ff["time"].startswith("2026-05-01T10:00:00")
    text = CliRunner().invoke(cli, ["diagnose", str(tmp_path)], standalone_mode=False).output
    assert text.splitlines()[0].startswith("Root cause: NPU out of memory")
    assert "Rank 2 failed first at 2026-05-01 10:00:00.100" in text and "rank(s) 0,1,3 failed after it" in text


def test_unrelated_failures_on_other_ranks_are_not_blamed_on_the_first(tmp_path):
    # rank 0 hits an operator parameter error at 10:00; rank 3 runs out of memory 40 minutes later; then the
    # other ranks time out.  Both are causes, in time order; the timeouts follow the OOM, not the EZ1001.
    (tmp_path / "rank_0.log").write_text(
        "[rank0]:2026-05-01 10:00:00,001 INFO step 10 loss 2.5\n"
        "[rank0]:[ERROR] 2026-05-01-10:00:05 (PID:4100, Device:0, RankID:0) ERR01100 OPS call acl api failed\n"
        "[rank0]:EZ1001: [PID: 4100] 2026-05-01-10:00:05.311.002 Tensor self not implemented for DT_DOUBLE, should be in "
        "dtype support list [DT_FLOAT,DT_FLOAT16].\n"
        "[rank0]:        TraceBack (most recent call last):\n"
        "[rank0]:        Not support dtype.\n"
        "[rank0]:2026-05-01 10:00:06,000 WARNING retrying the step on CPU\n"
        "[rank0]:[E501 10:41:00.000100 ProcessGroupHCCL.cpp:590] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkHCCL(SeqNum=900, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800003 milliseconds before timing out.\n"
    )
    (tmp_path / "rank_3.log").write_text(_oom(3, "2026-05-01 10:40:00,000"))
    (tmp_path / "rank_1.log").write_text(_hccl_timeout(1, 41))
    rep = diagnose((str(tmp_path),))
    ez = next(f for f in rep.findings if any("EZ1001" in e.text for e in f.evidence))
    oom = next(f for f in rep.findings if f.id == "npu-oom")
    assert ez.role == "cause" and oom.role == "cause"
    assert oom.consequence_of == "" and ez.consequence_of == ""
    order = [f.id for f in rep.findings]
    assert order.index(ez.id) < order.index("npu-oom")  # both causes, ordered by time
    assert ez.ranks == {0} and oom.ranks == {3}
    # the EZ1001 block is one finding: the ERR01100 suffix printed with it is folded in
    assert not any(f.id.startswith("torch-npu-ERR01100") for f in rep.findings)
    later = [f for f in rep.findings if f.role in ("consequence", "wrapper") and f.severity == "error"]
    assert later and all(f.consequence_of == "npu-oom" for f in later), [(f.id, f.consequence_of) for f in later]
    assert rep.first_failure() is ez


def test_ranks_interleaved_in_one_file(tmp_path):
    # a torchrun console: every line prefixed with its rank, the ranks' tracebacks interleaved line by line
    lines = [
        "[default0]:2026-05-01 11:00:00,000 INFO rank 0 starting",
        "[default1]:2026-05-01 11:00:00,000 INFO rank 1 starting",
        "[default1]:Traceback (most recent call last):",
        "[default0]:Traceback (most recent call last):",
        '[default1]:  File "/work/app/run.py", line 55, in <module>',
        '[default0]:  File "/work/app/run.py", line 55, in <module>',
        "[default1]:    train(cfg)",
        "[default0]:    train(cfg)",
        '[default1]:  File "/work/app/trainer.py", line 210, in train',
        '[default0]:  File "/work/app/trainer.py", line 231, in train',
        "[default1]:    loss.backward()",
        "[default0]:    dist.all_reduce(t)",
        "[default1]:RuntimeError: NPU out of memory. Tried to allocate 512.00 MiB (NPU 1; 32.00 GiB total capacity; "
        "30.50 GiB already allocated; 30.60 GiB current active; 100.00 MiB free; 31.00 GiB reserved in total by PyTorch)",
        "[default0]:[E501 11:31:00.100000 ProcessGroupHCCL.cpp:590] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkHCCL(SeqNum=77, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800100 milliseconds before timing out.",
        "[default0]:KeyError: 'never printed by this rank, a decoy for the per-rank reader'",
    ]
    p = tmp_path / "console.log"
    p.write_text("\n".join(lines) + "\n")
    rep = diagnose((str(p),))
    root = rep.findings[0]
    assert root.id == "npu-oom" and root.ranks == {1}
    assert root.frame == {"path": "/work/app/trainer.py", "line": 210, "function": "train"}
    watchdog = next(f for f in rep.findings if f.ranks == {0} and f.role == "consequence")
    assert watchdog.consequence_of == "npu-oom"
    # rank 0's traceback ends with its own exception line, attributed to rank 0 with rank 0's frame
    key_error = next(f for f in rep.findings if f.id == "python-exception")
    assert key_error.ranks == {0} and key_error.frame["line"] == 231
    doc = json.loads(CliRunner().invoke(cli, ["diagnose", "--format", "json", str(p)], standalone_mode=False).output)
    assert doc["summary"]["first_failure"]["rank"] == 1


def test_untimed_logs_keep_reading_order(tmp_path):
    # no timestamps at all: consequences are linked to the first cause read, as before
    (tmp_path / "rank_0.log").write_text("EI0002: The wait execution of the Notify register times out.\n")
    (tmp_path / "rank_1.log").write_text("ImportError: libascendcl.so: cannot open shared object file: No such file or directory\n")
    rep = diagnose((str(tmp_path),))
    cause = rep.findings[0]
    assert cause.role == "cause" and cause.ranks == {1}
    other = [f for f in rep.findings if f.ranks == {0}]
    assert other and other[0].consequence_of == cause.label()


def test_a_rank_prefixed_line_does_not_borrow_another_ranks_frame(tmp_path):
    p = tmp_path / "console.log"
    p.write_text(
        "[default1]:Traceback (most recent call last):\n"
        '[default1]:  File "/work/llm/train.py", line 99, in <module>\n'
        "[default1]:    trainer.train()\n"
        "[default1]:RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 1; 60.00 GiB total capacity; 50.00 GiB "
        "already allocated; 50.00 GiB current active; 1.00 GiB free; 58.00 GiB reserved in total by PyTorch)\n"
        "[default0]:[E502 08:50:01.000000 ProcessGroupHCCL.cpp:590] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkHCCL(SeqNum=88, OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1800001 milliseconds before timing out.\n")
    rep = diagnose((str(p),))
    oom = next(f for f in rep.findings if f.id == "npu-oom")
    other = [f for f in rep.findings if f.ranks == {0}]
    assert oom.frame["line"] == 99 and other and all(f.frame is None for f in other)


def test_only_consequences_in_the_log_say_so(tmp_path):
    (tmp_path / "rank_0.log").write_text(_hccl_timeout(0, 30))
    r = CliRunner().invoke(cli, ["diagnose", str(tmp_path)], standalone_mode=False)
    first = r.output.splitlines()[0]
    assert first.startswith("No root cause in these logs; first symptom: ") and "Add the logs of the other ranks" in first
    assert "— first symptom" in r.output


ELASTIC = """\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-05-01_10:31:02
  host      : node-a
  rank      : 0 (local_rank: 0)
  exitcode  : -6 (pid: 7001)
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-05-01_10:30:59
  host      : node-a
  rank      : 3 (local_rank: 3)
  exitcode  : 1 (pid: 7004)
  error_file: <N/A>
============================================================
"""


def test_torch_elastic_summary_names_the_first_rank(tmp_path):
    # no timestamps on the errors: the launcher's "Root Cause (first observed failure)" decides the first failure
    (tmp_path / "rank_1.log").write_text("ImportError: libhccl.so: cannot open shared object file: No such file or directory\n")
    (tmp_path / "rank_3.log").write_text("ModuleNotFoundError: No module named 'flash_attn'\n")
    (tmp_path / "launcher.log").write_text(ELASTIC)
    rep = diagnose((str(tmp_path),))
    assert rep.context["launcher_first_rank"]["value"] == 3 and rep.context["launcher_first_rank"]["line"] == 16
    assert rep.first_failure().ranks == {3} and rep.findings[0].ranks == {3}
    assert rep.to_dict()["summary"]["first_failure"]["launcher_rank"] == 3
    text = CliRunner().invoke(cli, ["diagnose", str(tmp_path)], standalone_mode=False).output
    assert "torch elastic names rank 3 as the first observed failure" in text
