"""A traceback pasted without its exception line (the log or the paste was cut off) is still evidence: when nothing
else explains the log it stands as the finding with the frame that failed, and a message-phrase rule can read that
frame (torch's device-backend autoload); it never displaces a catalogued error."""

from __future__ import annotations

from tests.diagnose.diag_util import diagnose_text

AUTOLOAD_CUT = """$ python3 -c "import torch"
Traceback (most recent call last):
  File "/opt/py/lib/python3.10/site-packages/torch/__init__.py", line 2790, in _import_device_backends
    entrypoint = backend_extension.load()
  File "/opt/py/lib/python3.10/importlib/metadata/__init__.py", line 171, in load
    module = import_module(match.group('module'))
  File "<frozen importlib._bootstrap>", line 1050, in _gcd_import
"""

USER_CUT = """Traceback (most recent call last):
  File "/home/me/proj/train.py", line 41, in <module>
    main()
  File "/home/me/proj/train.py", line 30, in main
    batch = next(loader)
"""


def test_a_cut_off_traceback_is_the_finding_with_the_frame_that_failed(tmp_path):
    rep = diagnose_text(tmp_path, USER_CUT)
    f = rep.findings[0]
    assert f.severity == "error" and "cut off before its exception line" in f.title
    assert f.frame == {"path": "/home/me/proj/train.py", "line": 30, "function": "main"}
    assert "train.py" in f.reason and "line 30" in f.reason
    assert "Paste more of the log" in f.next_step


def test_the_import_machinery_is_not_the_frame_named_and_the_autoload_rule_reads_it(tmp_path):
    f = diagnose_text(tmp_path, AUTOLOAD_CUT).findings[0]
    assert "_import_device_backends" in f.reason and "<frozen" not in f.reason
    assert "reason-device-backend-autoload" in f.settings
    assert "import torch_npu" in f.fix and "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in f.fix
    assert f.cause.startswith("Importing torch failed while it autoloaded its device backend")


def test_a_full_traceback_is_not_reported_as_cut_off(tmp_path):
    rep = diagnose_text(tmp_path, USER_CUT + "StopIteration: loader exhausted\n")
    assert rep.findings and not any("cut off" in f.title for f in rep.findings)


def test_a_catalogued_error_in_the_same_log_comes_first(tmp_path):
    log = ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.00 GiB total capacity; 50.00 GiB "
           "already allocated; 50.00 GiB current active; 1.00 GiB free; 58.00 GiB reserved in total by PyTorch)\n" + USER_CUT)
    rep = diagnose_text(tmp_path, log)
    assert rep.findings[0].id == "npu-oom"
    assert not any("cut off" in f.title for f in rep.findings)
