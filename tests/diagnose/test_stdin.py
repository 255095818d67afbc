"""`diagnose -` (standard input), the JSON report shape, the text headline, and the scan command."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ascendify.cli import cli

DEVICE_STRING = (
    "Traceback (most recent call last):\n"
    '  File "/home/dev/port/infer.py", line 8, in <module>\n'
    "    model.to('npu:0')\n"
    "RuntimeError: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
    "vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: npu:0\n"
)
CUDA_LEFTOVER = (
    "Traceback (most recent call last):\n"
    '  File "/home/dev/port/train.py", line 31, in <module>\n'
    "    x = x.cuda()\n"
    '  File "/usr/lib/python3/dist-packages/torch/cuda/__init__.py", line 310, in _lazy_init\n'
    '    raise AssertionError("Torch not compiled with CUDA enabled")\n'
    "AssertionError: Torch not compiled with CUDA enabled\n"
)


def _invoke(args, text):
    return CliRunner().invoke(cli, ["diagnose", *args], input=text, standalone_mode=False)


def test_stdin_text_report_leads_with_the_root_cause():
    r = _invoke(["-"], DEVICE_STRING)
    assert r.exception is None and r.return_value == 1
    first = r.output.splitlines()[0]
    assert first.startswith("Root cause: ") and first.endswith(".") and len(first) < 160
    assert "<stdin>:4" in r.output
    assert "code     /home/dev/port/infer.py:8 in <module>" in r.output


def test_stdin_empty_and_clean():
    r = _invoke(["-"], "")
    assert r.return_value == 0 and "No known error" in r.output and "note: <stdin>: empty file" in r.output
    r = _invoke(["-"], "2026-05-01 10:00:00,000 INFO step 1 loss 2.0\n")
    assert r.return_value == 0 and r.output.startswith("No known error found.")


def test_json_shape():
    r = _invoke(["--format", "json", "-"], DEVICE_STRING + "2026-05-01 10:00:00 [ERROR] EZ9999: Inner Error!\n")
    doc = json.loads(r.output)
    assert list(doc) == ["tool", "version", "command", "summary", "context", "findings", "files", "notes"]
    assert doc["command"] == "diagnose"
    assert {"root_cause", "first_error", "first_failure", "findings", "errors", "warnings"} <= set(doc["summary"])
    assert doc["files"] == [{"path": "<stdin>", "lines": 5, "bytes": len((DEVICE_STRING + "2026-05-01 10:00:00 [ERROR] EZ9999: Inner Error!\n").encode()),
                             "matched_lines": doc["files"][0]["matched_lines"], "skipped": None}]
    for i, f in enumerate(doc["findings"], 1):
        assert f["order"] == i
        assert {"id", "title", "severity", "role", "confidence", "cause", "fix", "next_step", "evidence", "source",
                "scan_rules", "exception", "python_frame", "consequence_of", "details"} <= set(f)
        assert isinstance(f["confidence"], float) and 0 < f["confidence"] < 1
        assert f["cause"] and f["fix"] and f["source"] and f["evidence"]
        for e in f["evidence"]:
            assert set(e) == {"file", "line", "rank", "time", "text"}
    f0 = doc["findings"][0]
    # issue 12's headline case: the catalogue explains it (torch_npu not imported / installed), not a bare exception
    assert f0["id"] != "python-exception" and "torch_npu" in f0["cause"] and f0["role"] == "cause"
    assert f0["exception"]["type"] == "RuntimeError"
    assert f0["python_frame"] == {"path": "/home/dev/port/infer.py", "line": 8, "function": "<module>"}
    # confidence orders with the ranking: the root cause is surer than a wrapper
    assert f0["confidence"] >= max(f["confidence"] for f in doc["findings"][1:]) if len(doc["findings"]) > 1 else True


def test_scan_command_names_the_user_file():
    r = _invoke(["--format", "json", "-"], CUDA_LEFTOVER)
    f = json.loads(r.output)["findings"][0]
    assert f["python_frame"]["path"] == "/home/dev/port/train.py"
    cmds = [x["command"] for x in f["scan_rules"]]
    assert cmds and cmds[0] == f"ascendify scan /home/dev/port/train.py --select {f['scan_rules'][0]['code']}"
    r = _invoke(["-"], CUDA_LEFTOVER)
    assert "run `ascendify scan /home/dev/port/train.py --select " in r.output.replace("\n            ", " ")


def test_scan_command_without_a_frame_uses_the_project():
    r = _invoke(["--format", "json", "-"], "AssertionError: Torch not compiled with CUDA enabled\n")
    f = json.loads(r.output)["findings"][0]
    assert f["scan_rules"] and all(x["command"].startswith("ascendify scan . --select ") for x in f["scan_rules"])


def test_output_file(tmp_path):
    out = tmp_path / "report.json"
    r = _invoke(["-", "-o", str(out)], DEVICE_STRING)
    assert r.output == "" and json.loads(out.read_text())["summary"]["errors"] >= 1  # format from the suffix
