"""CANN's TBE compile helpers print 'main process disappeared' when the process they serve has gone: a consequence
of the end of the run (or of a worker's death), never the root cause when the log shows an error."""

from __future__ import annotations

from tests.diagnose.diag_util import diagnose_text

TBE = "[ERROR] TBE Subprocess[task_distribute] raise error[], main process disappeared!\n"
OOM = ("RuntimeError: NPU out of memory. Tried to allocate 4.00 GiB (NPU 3; 60.00 GiB total capacity; 55.00 GiB already "
       "allocated; 55.00 GiB current active; 0.50 GiB free; 58.00 GiB reserved in total by PyTorch)\n")


def test_alone_the_lines_are_a_warning_that_says_the_run_ended(tmp_path):
    rep = diagnose_text(tmp_path, "Processed prompts: 100%|##########| 4/4\n" + TBE * 6)
    f = rep.findings[0]
    assert f.id == "tbe-subprocess-main-process-gone" and f.severity == "warning" and f.role == "consequence"
    assert f.count == 6 and not rep.errors
    assert "exit cleanly" in f.fix and "first error before these lines" in f.fix


def test_an_error_before_them_is_the_root_cause(tmp_path):
    rep = diagnose_text(tmp_path, OOM + TBE * 4)
    assert rep.findings[0].id == "npu-oom"
    assert any(f.id == "tbe-subprocess-main-process-gone" for f in rep.findings[1:])


def test_other_subprocess_messages_are_not_this_entry(tmp_path):
    rep = diagnose_text(tmp_path, "[ERROR] worker subprocess raise error, the main process is still alive\n")
    assert not any(f.id == "tbe-subprocess-main-process-gone" for f in rep.findings)
