"""Friction left from issue 22's new-user trial: fix --write --diff, bare `ascendify`, migrate/report on
a missing path, run's end-of-run sentence, binary .py files in the effort summary, KB markdown in
`ascendify ops`.  Torch-free."""

from __future__ import annotations

import json

import pytest

from tests.cli_util import run_cli

CUDA_SRC = "import torch\nx = torch.randn(2).cuda()\n"


# ----------------------------------------------------------------------------- fix: two modes at once
@pytest.mark.parametrize("args", [("--write", "--diff"), ("--diff", "--write")])
def test_fix_write_and_diff_together_is_a_usage_error(tmp_path, args):
    src = tmp_path / "a.py"
    src.write_text(CUDA_SRC)
    r = run_cli("fix", *args, str(src))
    assert r.code == 2 and r.out == ""
    line = r.err.strip()
    assert "\n" not in line
    assert line == "ascendify: error: fix: --diff and --write are different modes; choose one of --diff, --write, --out-dir"
    assert src.read_text() == CUDA_SRC  # nothing written, nothing silently dropped


def test_fix_three_modes_names_all_three(tmp_path):
    src = tmp_path / "a.py"
    src.write_text(CUDA_SRC)
    r = run_cli("fix", "--write", "--diff", "--out-dir", str(tmp_path / "out"), str(src))
    assert r.code == 2 and "--diff and --write and --out-dir are different modes" in r.err
    assert src.read_text() == CUDA_SRC and not (tmp_path / "out").exists()


def test_fix_single_modes_still_work(tmp_path):
    src = tmp_path / "a.py"
    src.write_text(CUDA_SRC)
    for args in ((), ("--diff",)):
        r = run_cli("fix", *args, str(src))
        assert r.code in (0, 1), r.err
        assert "+x = torch.randn(2).npu()" in r.out and src.read_text() == CUDA_SRC
    r = run_cli("fix", "--write", str(src))
    assert r.code in (0, 1), r.err
    assert ".npu()" in src.read_text() and r.out == ""


# ----------------------------------------------------------------------------- bare `ascendify`
def test_bare_ascendify_prints_help_on_stdout_and_exits_0():
    r = run_cli()
    assert r.code == 0 and r.err == ""
    assert r.out.startswith("Usage: ascendify") and "Commands:" in r.out and "scan" in r.out
    assert not r.out.startswith("ascendify: error")
    assert r.out == run_cli("--help").out


def test_unknown_command_is_still_an_error():
    r = run_cli("bogus")
    assert r.code == 2 and r.out == "" and "No such command 'bogus'" in r.err


# ----------------------------------------------------------------------------- a missing path: one wording
def test_migrate_and_report_missing_project_say_what_scan_says(tmp_path):
    missing = str(tmp_path / "nonexistent")
    scan = run_cli("scan", missing)
    assert scan.code == 2 and f"{missing}: no such file or folder" in scan.err
    for args in (("migrate", missing, "--out-dir", str(tmp_path / "o")), ("migrate", missing),
                 ("report", missing, "--out-dir", str(tmp_path / "o"))):
        r = run_cli(*args)
        assert r.code == 2 and r.out == "", args
        assert r.err == f"ascendify: error: {missing}: no such file or folder\n", args  # not click's "Invalid value"
    assert not (tmp_path / "o").exists()


def test_migrate_a_file_and_report_from_missing_are_one_line(tmp_path):
    f = tmp_path / "a.py"
    f.write_text(CUDA_SRC)
    r = run_cli("migrate", str(f), "--out-dir", str(tmp_path / "o"))
    assert r.code == 2 and r.err == f"ascendify: error: {f}: a file; `ascendify migrate` takes the project's folder\n"
    r = run_cli("report", "--from", str(tmp_path / "report.json"), "--out-dir", str(tmp_path / "o"))
    assert r.code == 2 and r.err == f"ascendify: error: {tmp_path / 'report.json'}: no such file or folder\n"
    r = run_cli("report", "--from", str(tmp_path), "--out-dir", str(tmp_path / "o"))
    assert r.code == 2 and "a folder; --from takes the report.json file" in r.err and "\n" not in r.err.strip()


# ----------------------------------------------------------------------------- run: the end-of-run sentence
def _run_doc(**kw) -> dict:
    doc = {"command_display": ["python", "-c", "import torch; print(torch.zeros(2).cuda())"], "exit_code": 0,
           "emulated": {"torch_npu": "2.12.0.post3", "chip": "Ascend910B3", "devices": 8, "mode": "shim"},
           "processes_seen": 1, "parameters": {"devices": {}, "on": None, "loud": False,
                                               "message": "no model parameters were seen (no nn.Module was built or moved)"},
           "fallbacks": [], "dtype_findings": [], "ops_by_class": {"npu_kernel": 25, "cpu_fallback": 3}}
    doc.update(kw)
    return doc


def test_run_summary_failing_program_ends_with_one_plain_sentence():
    from ascendify.run.report import render_text

    first = {"type": "AssertionError", "message": "Torch not compiled with CUDA enabled",
             "user_frame": {"path": "<string>", "line": 1, "function": "<module>", "code": ""}, "traceback": []}
    lines = render_text(_run_doc(exit_code=1, first_failure=first)).splitlines()
    # the command as a shell takes it back, not `python -c import torch; print(...)`
    assert lines[0].startswith("== ascendify run: `python -c 'import torch; print(torch.zeros(2).cuda())'` exited with code 1 (")
    assert "   at <string>:1 in <module>" in lines  # no dangling ': ' without a line of code
    assert "ops: 28 dispatched (25 NPU kernel, 3 CPU fallback)" in lines  # not the KB's class ids
    assert lines[-1] == "result: exit code 1 (AssertionError at <string>:1); no model parameters seen; no CPU fallbacks"
    assert not any(ln.startswith("no model parameters were seen") for ln in lines)  # said once, in the sentence


def test_run_summary_passing_program_names_devices_and_fallbacks():
    from ascendify.run.report import parameters_verdict, render_text

    pv = parameters_verdict({"npu:0": 4})
    fb = [{"op": "aten::nms", "where": ["det.py:12"], "processes": ["pid 1"]}]
    lines = render_text(_run_doc(parameters=pv, fallbacks=fb)).splitlines()
    assert lines[-1] == ("result: exit code 0 (ran to the end); parameters ended on the NPU (4 tensor(s) on npu:0); "
                         "1 op(s) fell back to the CPU")
    assert "CPU fallback: aten::nms reached from det.py:12" in lines
    loud = render_text(_run_doc(parameters=parameters_verdict({"cpu": 6}))).splitlines()
    assert any(ln.startswith("!!! TRAINED ON THE CPU, NOT THE NPU") for ln in loud)
    assert loud[-1] == ("result: exit code 0 (ran to the end); parameters ended on the CPU, not the NPU "
                        "(6 tensor(s) on cpu); no CPU fallbacks")
    stopped = render_text(_run_doc(exit_code=3, parameters=parameters_verdict({"cpu": 2}, failed=True))).splitlines()
    assert stopped[-1] == ("result: exit code 3 (no uncaught Python exception); parameters still on the CPU when it "
                           "stopped (2 tensor(s) on cpu); no CPU fallbacks")


# ----------------------------------------------------------------------------- effort: a binary .py is not effort
def test_binary_py_is_not_python_skipped_not_high_effort(tmp_path):
    (tmp_path / "x.py").write_bytes(b"\x00\x01\x02binary\xff\xfe")
    (tmp_path / "a.py").write_text(CUDA_SRC)
    (tmp_path / "py2.py").write_text('print "hi"\n')
    r = run_cli("scan", str(tmp_path), "--format", "json")
    files = {f["path"].rsplit("/", 1)[-1]: f for f in json.loads(r.out)["summary"]["files"]}
    assert files["x.py"]["effort"] == "skipped"
    assert files["x.py"]["effort_reason"] == ("not Python (skipped): binary file with a .py name (NUL bytes); "
                                              "nothing in it was checked")
    assert files["py2.py"]["effort"] == "high"  # Python 2: a person ports it
    assert "does not parse as Python 3 (SYN001)" in files["py2.py"]["effort_reason"]
    assert "CUDA-only" not in files["py2.py"]["effort_reason"]
    text = run_cli("scan", ".", cwd=str(tmp_path)).out
    effort = text[text.index("Effort per file"):]
    assert effort.index("py2.py") < effort.index("a.py") < effort.index("x.py")  # skipped files last
    assert "skipped x.py: not Python (skipped)" in effort and "high   x.py" not in effort


def test_file_effort_skipped_only_when_nothing_was_read():
    from ascendify.output.summary import NOT_PYTHON, file_effort
    from ascendify.diagnostics import Finding

    def finding(code, category="parse", severity="error", message="m"):
        return Finding(code=code, message=message, path="x.py", line=1, col=0, end_line=1, end_col=1, severity=severity,
                       category=category)

    assert NOT_PYTHON == {"SYN002", "SYN003", "SYN004"}
    for code in sorted(NOT_PYTHON):
        assert file_effort([finding(code)])[0] == "skipped"
    assert file_effort([finding("SYN001")])[0] == "high"
    mixed = [finding("SYN004"), finding("DEV001", "device", "error")]  # a notebook with one broken cell
    assert file_effort(mixed)[0] != "skipped"


# ----------------------------------------------------------------------------- ops: KB markdown as plain text
def test_ops_notes_are_plain_text_marked_zh():
    from ascendify.ops_cli import plain_text, summarise

    md = ("- `query`、`key`仅支持bf16。 - **约束**： - 见[文档](https://www.hiascend.com/doc) "
          "```python import torch_npu ``` | dtype | 支持 | |---|:---:| | fp16 | 是 |")
    t = plain_text(md)
    assert t.startswith("(zh) query、key仅支持bf16。 · 约束：")
    for markup in ("`", "**", "](", "---", "```", "|"):
        assert markup not in t, markup
    assert "文档" in t and "import torch_npu" in t and "fp16" in t
    assert plain_text("Use `torch.matmul` instead; see [the guide](https://x.org/g).") == \
        "Use torch.matmul instead; see the guide."
    assert plain_text("a * b, 2**3 and x - y stay") == "a * b, 2**3 and x - y stay"  # no markup: untouched
    short = summarise(md * 3)
    assert short.startswith("(zh) ") and short.endswith("more characters: --verbose)") and "**" not in short
    assert "**" not in summarise(md * 3, verbose=True) and "more characters" not in summarise(md * 3, verbose=True)


def test_ops_text_output_has_no_raw_markdown():
    r = run_cli("ops", "F.scaled_dot_product_attention", "--torch-npu", "2.12.0")
    assert r.code == 0, r.err
    note = r.out[r.out.index("Native API support list"):r.out.index("Risks")]
    assert "**" not in note and "`" not in note and "(zh)" in note
