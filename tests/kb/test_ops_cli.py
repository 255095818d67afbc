"""`ascendify ops`: the done-when query, API lookups, JSON, bad input."""

from __future__ import annotations

import json

from ascendify.kb import ops as kbops


class _R:
    def __init__(self, code, out):
        self.exit_code, self.output = code, out


def run(*args):
    """Run through the real entry point (exit codes as the console script gives them)."""
    import contextlib
    import io

    from ascendify.cli import main
    buf = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        try:
            main(["ops", *args])
        except SystemExit as exc:
            code = exc.code
    return _R(code, buf.getvalue())


def test_linalg_inv_ex_all_versions_is_cpu_fallback_everywhere_with_source():
    r = run("aten::linalg_inv_ex", "--all-versions")
    assert r.exit_code == 0, r.output
    for rel in kbops.releases():
        rows = [l for l in r.output.splitlines() if l.startswith("│ linalg_inv_ex ") and f" {rel} " in l]
        assert rows and "CPU fallback" in rows[0], rel
    assert "every release (2.1.0.post17 … 2.14.0, 13 releases)" in " ".join(r.output.split())  # wrapped lines are indented
    assert "VariableFallbackKernel.cpp" in r.output.replace("\n", "")
    assert "npu_native_functions_by_codegen.yaml" in r.output.replace("\n", "")
    j = json.loads(run("aten::linalg_inv_ex", "--all-versions", "--format", "json").output)
    rows = [s for s in j["support"] if s["overload"] == "linalg_inv_ex"]
    assert len(rows) == 13 and {s["class"] for s in rows} == {"cpu_fallback"}
    assert all("7584883a36ab" in x["ops_table"] or x["torch_npu"] != "2.7.1.post11" for x in j["sources"])


def test_api_queries():
    j = json.loads(run("torch.linalg.inv", "--torch-npu", "2.7.1.post11", "--format", "json").output)
    assert j["kind"] == "api" and "linalg_inv_ex" in j["reached_ops"]
    assert any(r["kind"] == "cpu_fallback" for r in j["risks"]) and j["recipes"]
    j = json.loads(run("Tensor.scatter_add_", "--torch-npu", "2.7.1.post11", "--format", "json").output)
    assert j["support"][0]["class"] == "npu_kernel" and j["support"][0]["npu_impl"] == "acl_op+op_api"
    j = json.loads(run("nanmean", "--torch-npu", "2.11.0", "--format", "json").output)
    assert {"nanmean", "nanmean.out"} <= set(j["named_ops"])
    notes = [n for n in j["api_notes"] if n["api"] == "torch.nanmean" and n.get("listed")]
    assert notes and notes[0]["dtypes"] == ["bfloat16", "float16", "float32"]


def test_chip_hardware_and_deprecated():
    j = json.loads(run("torch.bmm", "--torch-npu", "2.13.0", "--chip", "Ascend950DT", "--format", "json").output)
    assert any(r["kind"] == "hardware" and "950DT" in r["text"] for r in j["risks"])
    j = json.loads(run("torch_npu.npu_conv2d", "--format", "json").output)
    assert j["recipes"][0]["text"] == "Replace torch_npu.npu_conv2d with torch.nn.functional.conv2d."


def test_unknown_version_and_unknown_query():
    r = run("bmm", "--torch-npu", "2.2.0")
    assert r.exit_code == 0
    assert "torch_npu 2.2.0 is not in the KB; using the nearest known release torch_npu 2.1.0.post17" in r.output.replace("\n", " ")
    r = run("aten::no_such_op_xyz")
    assert r.exit_code == 1 and "unknown" in r.output
    r = run("bmm", "--torch-npu", "banana")
    assert r.exit_code == 2 and "banana" in r.output
    r = run("bmm", "--torch-npu", "2.7.1", "--all-versions")
    assert r.exit_code == 2
