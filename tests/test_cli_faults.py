"""Faults a user hits: writes that fail, interrupted runs (issue 22)."""

from __future__ import annotations

import os

import pytest

from tests.cli_util import run_cli

CUDA_SRC = 'import torch\nx = torch.zeros(3).cuda()\ny = x.to("cuda")\n'


def _deny(monkeypatch, module, name="atomic_write"):
    def denied(path, *a, **k):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(module, name, denied)


def test_fix_write_unwritable_file_is_not_counted_as_fixed(tmp_path, monkeypatch):
    import ascendify.fix.run as fixrun

    p = tmp_path / "a.py"
    p.write_text(CUDA_SRC)
    _deny(monkeypatch, fixrun)
    r = run_cli("fix", "--write", "--no-cache", "--jobs", "1", str(p))
    assert p.read_text() == CUDA_SRC
    assert r.code == 2, r.err
    assert "cannot write (Permission denied)" in r.err
    assert "fixed 0 finding(s) in 0 file(s); 2 remaining" in r.err, r.err


def test_fix_write_unwritable_json_counts(tmp_path, monkeypatch):
    import json

    import ascendify.fix.run as fixrun

    p = tmp_path / "a.py"
    p.write_text(CUDA_SRC)
    _deny(monkeypatch, fixrun)
    r = run_cli("fix", "--write", "--no-cache", "--jobs", "1", "--format", "json", str(p))
    assert r.code == 2
    doc = json.loads(r.out)
    assert doc["changes"] == []
    assert len(doc["remaining"]) == 2
    assert doc["errors"] and "cannot write" in doc["errors"][0]["error"]


def _all_help() -> dict:
    from ascendify.cli import LAZY_COMMANDS

    return {name: run_cli(name, "--help").out for name in LAZY_COMMANDS}


def test_help_texts_name_no_future_release():
    """0.1.0 help texts must not speak of what happened 'before 0.2'."""
    from ascendify import __version__

    for name, text in _all_help().items():
        flat = " ".join(text.split())
        assert "before 0.2" not in flat.lower(), (name, __version__)


def test_profile_help_shows_plot():
    text = run_cli("profile", "--help").out
    assert "--plot" in text


def test_out_dir_write_error_names_out_dir(tmp_path, monkeypatch):
    """The migrated copy cannot be written: the message names --out-dir, not the gone --output."""
    import ascendify.fix.run as fixrun

    p = tmp_path / "proj"
    p.mkdir()
    (p / "a.py").write_text(CUDA_SRC)
    _deny(monkeypatch, fixrun)
    r = run_cli("fix", "--no-cache", "--jobs", "1", str(p), "--out-dir", str(tmp_path / "copy"))
    assert r.code == 2
    line = [ln for ln in r.err.splitlines() if "error" in ln][0]
    assert "--out-dir" in line and "--output " not in line and "--output folder" not in line, line


# --------------------------------------------------------------------------- artefacts into a folder that cannot be written
@pytest.fixture
def ro_dir(tmp_path):
    """A folder nobody can create files in: mode 0o555, or for root (who ignores modes) the
    immutable attribute (chattr +i); skipped where neither holds."""
    import shutil
    import subprocess

    d = tmp_path / "read-only"
    d.mkdir()
    root = os.geteuid() == 0
    if root:
        if not shutil.which("chattr") or subprocess.run(["chattr", "+i", str(d)], capture_output=True).returncode:
            pytest.skip("running as root without chattr: cannot make a folder unwritable")
    else:
        d.chmod(0o555)
    try:
        try:
            (d / "probe").write_text("x")
            pytest.skip("this file system lets the folder be written")
        except OSError:
            pass
        yield d
    finally:
        if root:
            subprocess.run(["chattr", "-i", str(d)], capture_output=True)
        else:
            d.chmod(0o755)


def _blocked(ro_dir, name: str) -> str:
    return str(ro_dir / name)


def _one_line_error(r, target: str):
    assert r.code == 2, r.err
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("ascendify: error: "), r.err
    assert "internal error" not in r.err and "Traceback" not in r.err
    assert os.path.dirname(target) in lines[0], lines[0]


def test_export_onnx_into_unwritable_folder(ro_dir):
    pytest.importorskip("onnx")
    target = _blocked(ro_dir, "m.onnx")
    r = run_cli("export", "tests.export.toy_models:cnn", "--input", "x:1,3,32,32:float32", "--onnx", target)
    _one_line_error(r, target)


def test_baseline_npz_into_unwritable_folder(tmp_path, ro_dir):
    import numpy as np

    data = tmp_path / "data"
    data.mkdir()
    np.save(data / "s0.npy", np.random.default_rng(0).random((1, 3, 32, 32), dtype=np.float32))
    target = _blocked(ro_dir, "b.npz")
    r = run_cli("baseline", "tests.export.toy_models:cnn", "--data", str(data), "--npz", target)
    _one_line_error(r, target)


def test_profile_plot_into_unwritable_folder(tmp_path, ro_dir):
    pytest.importorskip("matplotlib")
    from tests.profile.test_profile import KD_OWN, STEP_TRACE, run_dir

    d = run_dir(tmp_path, kernel_details__csv=KD_OWN, step_trace_time__csv=STEP_TRACE)
    target = _blocked(ro_dir, "c.svg")
    r = run_cli("profile", d, "--plot", target)
    _one_line_error(r, target)


# --------------------------------------------------------------------------- diagnose text
def test_diagnose_text_shows_oom_numbers_not_a_dict(tmp_path):
    log = tmp_path / "oom.log"
    log.write_text('Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    x = torch.empty(1)\n'
                   "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.00 GiB total capacity)\n")
    out = run_cli("diagnose", str(log)).out
    assert "requested=" not in out and "explain=[]" not in out and "verdict=" not in out and "unit=MiB" not in out, out
    mem = [ln for ln in out.splitlines() if ln.strip().startswith("memory")]
    assert mem == ["   memory   real shortage: requested 2.00 GiB on NPU 0 (60.00 GiB total capacity)"], out


def test_diagnose_details_rendered_as_words():
    from ascendify.diagnose.cli import details_text

    assert details_text({"first_step": 120, "loss_scale": 1.0, "record": "loss", "ranks": [0, 3]}) == \
        "first step 120; loss scale 1; record loss; ranks 0, 3"
    assert details_text({"context_advice": "x", "chain": "y", "wrapped_codes": ["EZ9999"]}) == ""


# --------------------------------------------------------------------------- bounded summaries
def test_effort_per_file_is_bounded(tmp_path):
    for i in range(25):
        (tmp_path / f"m{i:02d}.py").write_text(CUDA_SRC + ("from apex import amp\n" if i == 7 else ""))
    r = run_cli("scan", "--no-cache", "--jobs", "1", str(tmp_path))
    lines = r.out.splitlines()
    head = lines.index("Effort per file (the 10 with the most work of 25):")
    rows = lines[head + 1:head + 11]
    assert all(ln.startswith("  ") for ln in rows)
    assert "m07.py" in rows[0] and rows[0].split()[0] == "high", rows[0]
    assert lines[head + 11] == "  … 15 more file(s): 15 low (`--format json` lists every file)."


# --------------------------------------------------------------------------- profile: one time unit per table
_KD_HEAD = ("Step Id,Device_id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Num,"
            "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats\n")


def test_profile_table_uses_one_time_unit(tmp_path):
    from ascendify.profile.analyze import analyze
    from ascendify.profile.cli import render_text
    from tests.profile.test_profile import run_dir

    kd = _KD_HEAD + "".join(f"1,0,{n}_{i},{n},AI_CORE,{100 * i},{us},0,1,N/A,FLOAT,ND,N/A,FLOAT,ND\n"
                            for i, (n, us) in enumerate([("MatMulV2", 5000), ("Add", 40), ("Mul", 12)]))
    steps = "Step,Computing,Communication (Not Overlapped),Overlapped,Communication,Free,Stage,Bubble\n" \
            "1,3000,50,10,60,50,3100,0\n2,900,20,10,30,5,925,0\n"
    text = render_text(analyze(run_dir(tmp_path, kernel_details__csv=kd, step_trace_time__csv=steps)))
    lines = text.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("op type"))
    rows = lines[head + 1:head + 4]
    assert "total (ms)" in lines[head] and "avg (ms)" in lines[head], lines[head]
    assert [r.split()[3:5] for r in rows] == [["5.000", "5.000"], ["0.040", "0.040"], ["0.012", "0.012"]], rows
    assert not any("µs" in r or " ms" in r for r in rows), rows
    step_rows = [ln for ln in lines if ln.startswith("    ") and ln.split()[:1] in (["1"], ["2"])]
    assert len(step_rows) == 2 and all("µs" not in r for r in step_rows), step_rows


# --------------------------------------------------------------------------- probe: the op the user called
SDPA_MODEL = '''import torch
import torch.nn.functional as F


class M(torch.nn.Module):
    def forward(self, q):
        return F.scaled_dot_product_attention(q, q, q)


def factory():
    return M()
'''


def test_probe_judges_sdpa_as_called_not_its_cpu_kernel(tmp_path, monkeypatch):
    """torch's CPU picks _scaled_dot_product_flash_attention_for_cpu for SDPA; torch_npu registers
    its own kernel for aten::scaled_dot_product_attention, so that is no CPU fallback on the NPU."""
    import json
    import sys

    pytest.importorskip("torch")
    (tmp_path / "sdpa_toy.py").write_text(SDPA_MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("sdpa_toy", None)
    r = run_cli("probe", "sdpa_toy:factory", "--input", "q:1,2,8,16:float32", "--format", "json", cwd=str(tmp_path))
    doc = json.loads(r.out)
    cl = doc["classification"]
    assert not [f for f in cl["findings"] if f["kind"] == "cpu_fallback"], cl["findings"]
    row = next(x for x in cl["rows"] if x["op"] == "_scaled_dot_product_flash_attention_for_cpu")
    assert row["class"] == "npu_composite" and row["npu_impl"] == "aten::scaled_dot_product_attention"
    assert doc["verdict"].startswith("VERDICT: ready"), doc["verdict"]
    note = next(f for f in cl["findings"] if f["kind"] == "npu_override")
    assert "_scaled_dot_product_flash_attention_for_cpu" in note["message"]
