"""`ascendify export` output files: modes follow the umask, atc.sh is executable and runs from any folder."""

from __future__ import annotations

import json
import os
import subprocess

from tests.compare.helpers import run
from tests.conftest import mode_of

FAKE_ATC = """#!/bin/sh
# records where it ran and its arguments, one per line
{ echo "PWD=$PWD"; for a in "$@"; do echo "$a"; done; } > "$ATC_LOG"
"""


def _export(tmp_path, capsys, *extra):
    out = tmp_path / "out" / "cnn.onnx"
    out.parent.mkdir()
    code, text, err = run(["export", "tests.export.toy_models:cnn", "--input", "x:1,3,16,16:float32",
                           "--onnx", str(out), *extra], capsys)
    assert code == 0, text + err
    return out


def _fake_atc(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "atc").write_text(FAKE_ATC)
    os.chmod(bindir / "atc", 0o755)
    log = tmp_path / "atc.log"
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", ATC_LOG=str(log))
    env.pop("SOC_VERSION", None)
    return env, log


def test_export_files_follow_the_umask(tmp_path, capsys, umask):
    umask(0o027)
    out = _export(tmp_path, capsys, "--chip", "Ascend910B3")
    folder = out.parent
    assert mode_of(out) == 0o640  # was 0o600 (mkstemp)
    assert mode_of(folder / "cnn.export.json") == 0o640
    assert mode_of(folder / "cnn.atc.sh") == 0o750  # executable
    assert sorted(os.listdir(folder)) == ["cnn.atc.sh", "cnn.export.json", "cnn.onnx"]  # no temp file left


def test_atc_script_runs_from_another_folder(tmp_path, capsys, umask):
    umask(0o022)
    out = _export(tmp_path, capsys, "--chip", "Ascend910B3")
    script = out.parent / "cnn.atc.sh"
    assert mode_of(script) == 0o755
    env, log = _fake_atc(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # run it by a relative path from an unrelated folder, as an executable (no "sh" in front)
    r = subprocess.run([os.path.join("..", "out", "cnn.atc.sh")], cwd=str(elsewhere), env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = log.read_text().splitlines()
    assert lines[0] == f"PWD={out.parent}"
    args = lines[1:]
    assert args == ["--model=cnn.onnx", "--framework=5", "--output=cnn", "--soc_version=Ascend910B3",
                    "--input_format=NCHW", "--input_shape=x:1,3,16,16", "--precision_mode=force_fp16",
                    "--output_type=FP32"]
    # the names atc got resolve, from the folder it ran in, to the exported model
    assert os.path.samefile(os.path.join(lines[0][4:], args[0].split("=", 1)[1]), out)
    # the report keeps the command with the paths as the user gave them
    rep = json.loads((out.parent / "cnn.export.json").read_text())
    assert rep["atc_command"].startswith(f"atc --model={out} ")


def test_atc_script_without_soc_version_asks_for_it(tmp_path, capsys):
    out = _export(tmp_path, capsys)
    env, log = _fake_atc(tmp_path)
    script = str(out.parent / "cnn.atc.sh")
    r = subprocess.run([script], cwd=str(tmp_path), env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "set SOC_VERSION" in r.stderr and not log.exists()
    env["SOC_VERSION"] = "Ascend310P3"
    r = subprocess.run([script], cwd=str(tmp_path), env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "--soc_version=Ascend310P3" in log.read_text().splitlines()


def test_aipp_config_is_named_beside_the_script(tmp_path, capsys):
    out = _export(tmp_path, capsys, "--normalize", "imagenet", "--aipp", "--chip", "Ascend310P3")
    env, log = _fake_atc(tmp_path)
    r = subprocess.run([str(out.parent / "cnn.atc.sh")], cwd=str(tmp_path), env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "--insert_op_conf=cnn.aipp.cfg" in log.read_text().splitlines()
    assert (out.parent / "cnn.aipp.cfg").is_file()
