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
    """Its fixes are "not written": neither fixed nor findings that need a person; the run failed (exit 2)."""
    import ascendify.fix.run as fixrun

    p = tmp_path / "a.py"
    p.write_text(CUDA_SRC)
    _deny(monkeypatch, fixrun)
    r = run_cli("fix", "--write", "--no-cache", "--jobs", "1", str(p))
    assert p.read_text() == CUDA_SRC
    assert r.code == 2, r.err
    assert (f"ascendify: error: {p}: not written (Permission denied): 2 fix(es) not applied, file left unchanged; "
            "make the file and its folder writable and rerun\n") in r.err, r.err
    assert r.err.splitlines()[-1] == ("fixed 0 finding(s) in 0 file(s); 2 remaining finding(s): 0 need a person, "
                                      "2 have fixes in 1 file(s) that were not written (see above), those files unchanged."), r.err


def test_fix_write_unwritable_json_counts(tmp_path, monkeypatch):
    import json

    import ascendify.fix.run as fixrun

    p = tmp_path / "a.py"
    p.write_text(CUDA_SRC + "import apex\n")  # one finding without a fix: that one does need a person
    _deny(monkeypatch, fixrun)
    r = run_cli("fix", "--write", "--no-cache", "--jobs", "1", "--format", "json", str(p))
    assert r.code == 2
    doc = json.loads(r.out)
    assert doc["changes"] == [] and doc["errors"] == []
    assert [f["code"] for f in doc["remaining"]] == ["EXT002"], doc["remaining"]
    assert doc["stats"] == {"applied": 0, "files_changed": 0, "remaining": 1, "unsafe_skipped": 0, "fixed": 0,
                            "not_written": 2, "files_not_written": 1}
    assert doc["not_written"] == [{"path": str(p), "reason": "Permission denied", "fixes": 2}]


def test_fix_write_a_writable_file_has_nothing_not_written(tmp_path):
    import json

    p = tmp_path / "a.py"
    p.write_text(CUDA_SRC)
    r = run_cli("fix", "--write", "--no-cache", "--jobs", "1", "--format", "json", str(p))
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["stats"]["fixed"] == 2 and doc["stats"]["not_written"] == 0 and doc["not_written"] == []
    assert "not written" not in r.err and ".npu()" in p.read_text()


def test_fix_write_requirements_that_cannot_be_written(tmp_path, monkeypatch):
    """A dependency file's fixes that cannot be written: "not written" too, and the run fails."""
    import json

    import ascendify.fsutil as fsutil

    (tmp_path / "requirements.txt").write_text("torch==2.1.0\n")
    (tmp_path / "a.py").write_text("import torch\n")
    _deny(monkeypatch, fsutil)
    r = run_cli("fix", "--write", "--no-cache", "--jobs", "1", "--format", "json", str(tmp_path))
    doc = json.loads(r.out)
    nw = doc["not_written"]
    assert r.code == 2 and len(nw) == 1 and nw[0]["path"].endswith("requirements.txt") and nw[0]["reason"] == "Permission denied"
    assert doc["stats"]["not_written"] == nw[0]["fixes"] > 0 and doc["stats"]["fixed"] == 0
    assert not any(f["code"].startswith("DEP") and f.get("fix") for f in doc["remaining"]), doc["remaining"]
    assert (tmp_path / "requirements.txt").read_text() == "torch==2.1.0\n"


def test_fix_write_into_a_read_only_folder(ro_dir):
    """A real folder that cannot be written (no monkeypatch): the OS's reason is in the line."""
    import subprocess

    p = ro_dir / "a.py"
    root = os.geteuid() == 0
    subprocess.run(["chattr", "-i", str(ro_dir)], capture_output=True) if root else ro_dir.chmod(0o755)
    p.write_text(CUDA_SRC)
    subprocess.run(["chattr", "+i", str(ro_dir)], capture_output=True) if root else ro_dir.chmod(0o555)
    r = run_cli("fix", "--write", "--no-cache", "--jobs", "1", str(p))
    assert r.code == 2 and p.read_text() == CUDA_SRC
    line = next(ln for ln in r.err.splitlines() if "not written" in ln and ln.startswith("ascendify: error: "))
    assert str(p) in line and ("Permission denied" in line or "Operation not permitted" in line), line
    assert "2 remaining finding(s): 0 need a person, 2 have fixes in 1 file(s) that were not written" in r.err.splitlines()[-1]


# --------------------------------------------------------------------------- a read-only file in a writable folder
READ_ONLY_SRC = CUDA_SRC + "z = torch.randn(2, device='cuda')\nprint(torch.cuda.get_device_name(0))\n"


def test_is_read_only_by_mode_bits_and_access(tmp_path, monkeypatch):
    """The owner's write bit decides even for root (whom os.access lets write anything); os.access too."""
    from ascendify.fsutil import is_read_only

    p = tmp_path / "a.py"
    p.write_text("x = 1\n")
    p.chmod(0o444)
    assert is_read_only(str(p)) is True
    p.chmod(0o644)
    assert is_read_only(str(p)) is False
    assert is_read_only(str(tmp_path / "missing.py")) is False  # a new file: nothing to keep
    monkeypatch.setattr(os, "access", lambda path, m, **k: False)  # a user without write permission
    assert is_read_only(str(p)) is True


def test_atomic_write_keeps_a_read_only_file(tmp_path):
    from ascendify.fsutil import READ_ONLY, atomic_write

    p = tmp_path / "a.py"
    p.write_text("old\n")
    p.chmod(0o444)
    with pytest.raises(PermissionError) as exc:
        atomic_write(str(p), b"new\n", keep_read_only=True)
    assert exc.value.strerror == READ_ONLY == "read-only file"
    assert p.read_text() == "old\n" and [x.name for x in tmp_path.iterdir()] == ["a.py"]  # no temporary file left
    atomic_write(str(p), b"new\n")  # without keep_read_only (artefacts ascendify owns): replaced, mode kept
    assert p.read_text() == "new\n" and (p.stat().st_mode & 0o777) == 0o444


def test_fix_write_read_only_file_is_not_written(tmp_path):
    """chmod a-w on the file, folder writable: not rewritten (before: rewritten, rc 0, 'fixed 11 finding(s)');
    its 14 findings all remain: 3 for a person, 11 whose fixes were not written (before: '3 remaining')."""
    import pathlib

    src = (pathlib.Path(__file__).resolve().parent.parent / "examples" / "cuda_project" / "trainer" / "utils.py").read_text()
    p = tmp_path / "utils.py"
    p.write_text(src)
    p.chmod(0o444)
    r = run_cli("fix", "--write", "--no-cache", "--jobs", "1", str(p))
    assert p.read_text() == src and (p.stat().st_mode & 0o777) == 0o444
    assert r.code == 2, r.err
    assert (f"ascendify: error: {p}: not written (read-only file): 11 fix(es) not applied, file left unchanged; "
            "make the file and its folder writable and rerun\n") in r.err, r.err
    assert r.err.splitlines()[-1] == ("fixed 0 finding(s) in 0 file(s); 14 remaining finding(s): 3 need a person "
                                      "(1 of them fixable with --unsafe-fixes), 11 have fixes in 1 file(s) that were "
                                      "not written (see above), those files unchanged."), r.err


def test_fix_write_read_only_file_json(tmp_path):
    import json

    p = tmp_path / "a.py"
    p.write_text(READ_ONLY_SRC)
    p.chmod(0o444)
    r = run_cli("fix", "--write", "--no-cache", "--jobs", "1", "--format", "json", str(p))
    assert r.code == 2 and p.read_text() == READ_ONLY_SRC
    doc = json.loads(r.out)
    assert [(os.path.basename(x["path"]), x["reason"]) for x in doc["not_written"]] == [("a.py", "read-only file")], doc
    assert doc["stats"]["fixed"] == 0 and doc["stats"]["not_written"] == doc["not_written"][0]["fixes"] > 0
    assert doc["changes"] == []


def test_fix_write_writable_file_still_written(tmp_path):
    """The negative: a file with its write bit is rewritten as before (exit 0 or the --fail-on code, not 2)."""
    p = tmp_path / "a.py"
    p.write_text(READ_ONLY_SRC)
    p.chmod(0o644)
    r = run_cli("fix", "--write", "--no-cache", "--jobs", "1", str(p))
    assert p.read_text() != READ_ONLY_SRC and "not written" not in r.err and r.code != 2, r.err
    assert (p.stat().st_mode & 0o777) == 0o644


def test_fix_write_read_only_requirements_not_written(tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text("torch==2.1.0\n")
    req.chmod(0o444)
    (tmp_path / "a.py").write_text(CUDA_SRC)
    r = run_cli("fix", "--write", "--no-cache", "--jobs", "1", str(tmp_path))
    assert req.read_text() == "torch==2.1.0\n" and r.code == 2, r.err
    assert any("requirements.txt: not written (read-only file)" in ln for ln in r.err.splitlines()), r.err
    assert (tmp_path / "a.py").read_text() != CUDA_SRC  # the writable file is fixed


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
