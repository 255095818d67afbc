"""Separate incidents stay separate: a folder holding a single-process log and, in a folder of its own, the rank
logs of another job hours later is two diagnoses, not one timeline (issue 22); the rank logs of one job, or
folders whose times overlap, stay one incident."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ascendify.cli import cli
from ascendify.diagnose.engine import diagnose, incident_groups, job_folder

AICORE = """[ERROR] RUNTIME(31337,python3):2026-05-01-12:10:03.101.220 [task.cc:1482]31340 ReportExceptProc: Aicore kernel execute failed, ret=507015, aicore exception fault kernel_name=Gather_1_mix_aiv
Traceback (most recent call last):
  File "/srv/job_b/train.py", line 14, in <module>
    sys.exit(main(parse_args()))
  File "/srv/job_b/train.py", line 9, in main
    value = loss.item()
RuntimeError: ACL stream synchronize failed, error code is 507015
"""
OOM_RANK1 = """2026-05-01 10:05:12,000 INFO step 40 loss 2.1
[rank1]: RuntimeError: NPU out of memory. Tried to allocate 1.50 GiB (NPU 1; 60.96 GiB total capacity; 57.12 GiB already allocated; 57.12 GiB current active; 1.02 GiB free; 58.30 GiB reserved in total by PyTorch)
"""
TIMEOUT_RANK0 = """2026-05-01 10:05:10,000 INFO step 40 loss 2.1
[ERROR] HCCL(52001,python3):2026-05-01-10:35:48.123.456 [notify_pool.cc:212]52019 Wait: EI0002: The wait execution of the Notify register times out.
"""


def _two_jobs(tmp_path):
    (tmp_path / "job_a").mkdir()
    (tmp_path / "job_a" / "rank_0.log").write_text(TIMEOUT_RANK0)
    (tmp_path / "job_a" / "rank_1.log").write_text(OOM_RANK1)
    (tmp_path / "single.log").write_text(AICORE)
    return tmp_path


def test_two_unrelated_incidents_are_diagnosed_apart(tmp_path):
    rep = diagnose((str(_two_jobs(tmp_path)),))
    assert len(rep.incidents) == 2
    by_file = {tuple(sorted(s.path.rsplit("/", 1)[-1] for s in r.files)): r for r in rep.incidents}
    job = by_file[("rank_0.log", "rank_1.log")]
    single = by_file[("single.log",)]
    assert job.findings[0].id == "npu-oom" and [f.id for f in job.findings].count("hccl-exec-timeout") == 1
    assert single.findings[0].id == "aicore-exception"
    # no finding mixes the two: every evidence line of an incident comes from its own files
    for r in rep.incidents:
        own = {s.path for s in r.files}
        assert all(e.file in own for f in r.findings for e in f.evidence)
    # the timeout is a consequence of its own job's OOM, never of the other incident
    timeout = next(f for f in job.findings if f.id == "hccl-exec-timeout")
    assert timeout.consequence_of == "npu-oom"
    d = rep.to_dict()
    assert d["summary"]["incidents"] == 2 and len(d["incidents"]) == 2
    assert {f["incident"] for f in d["findings"]} == {1, 2}
    json.dumps(d)


def test_the_text_report_has_one_section_per_incident(tmp_path):
    res = CliRunner().invoke(cli, ["diagnose", str(_two_jobs(tmp_path)), "--fail-on", "never"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("2 separate incidents")
    assert res.output.count("=== Incident ") == 2
    assert "Incident 1: Root cause:" in res.output and "Incident 2: Root cause:" in res.output


def test_rank_folders_of_one_job_stay_one_incident(tmp_path):
    for r, text in ((0, TIMEOUT_RANK0), (1, OOM_RANK1)):
        (tmp_path / f"worker-{r}").mkdir()
        (tmp_path / f"worker-{r}" / "out.log").write_text(text)
    assert job_folder(str(tmp_path / "worker-1" / "out.log")) == job_folder(str(tmp_path / "worker-0" / "out.log"))
    rep = diagnose((str(tmp_path),))
    assert rep.incidents == []
    assert rep.findings[0].id == "npu-oom"
    assert next(f for f in rep.findings if f.id == "hccl-exec-timeout").consequence_of == "npu-oom"


def test_folders_with_overlapping_times_or_no_times_stay_one_incident(tmp_path):
    # two nodes of one job in folders of their own: their times overlap, so one timeline
    for node, text in (("node_a", TIMEOUT_RANK0), ("node_b", OOM_RANK1)):
        (tmp_path / node).mkdir()
        (tmp_path / node / "train.log").write_text(text)
    files = [str(tmp_path / "node_a" / "train.log"), str(tmp_path / "node_b" / "train.log")]
    assert incident_groups(files) == [files]
    # without timestamps nothing says they are apart: one incident
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    (tmp_path / "x" / "a.log").write_text("RuntimeError: something failed\n")
    (tmp_path / "y" / "b.log").write_text("KeyError: 'input_ids'\n")
    plain = [str(tmp_path / "x" / "a.log"), str(tmp_path / "y" / "b.log")]
    assert incident_groups(plain) == [plain]


def test_cann_log_layout_is_one_job(tmp_path):
    a = tmp_path / "ascend" / "log" / "debug" / "plog" / "plog-1_2026.log"
    b = tmp_path / "ascend" / "log" / "debug" / "device-0" / "device-1_2026.log"
    assert job_folder(str(a)) == job_folder(str(b))


def test_a_traceback_after_a_cann_line_is_not_its_reason(tmp_path):
    # the indented source line of the traceback printed after the runtime error is not the message's reason
    p = tmp_path / "a.log"
    p.write_text(AICORE)
    f = diagnose((str(p),)).findings[0]
    assert f.id == "aicore-exception"
    assert "sys.exit" not in (f.reason or "") and "Aicore kernel execute failed" in f.reason
