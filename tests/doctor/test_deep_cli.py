"""--deep probe classification, the CLI (text + JSON), parsers."""

from __future__ import annotations

import json
import os
import stat
import textwrap

import pytest
from click.testing import CliRunner

from ascendify.doctor import deep, parsers as P
from ascendify.doctor.cli import doctor as doctor_cmd, read_env_file
from ascendify.doctor.model import schema
from ascendify.doctor.sysroot import SysRoot

from . import fakes as F
from .test_doctor import stack


def fake_python(tmp_path, body: str) -> str:
    """An executable standing in for the interpreter the probe runs in."""
    path = str(tmp_path / "fakepython")
    with open(path, "w") as fh:
        fh.write("#!/bin/sh\n" + textwrap.dedent(body))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def test_probe_crash_undefined_symbol_is_version_mismatch(tmp_path):
    py = fake_python(tmp_path, """\
        echo '@@ascendify-deep {"step": "import", "start": true}'
        echo 'ImportError: /opt/py/site-packages/torch_npu/lib/libtorch_npu.so: undefined symbol: MsprofSysCycleTime' >&2
        kill -11 $$
        """)
    events, err, rc, timed_out = deep.run_probe(py, {"PATH": "/usr/bin:/bin"}, timeout=20)
    checks = deep.checks_from_events(events, err, rc, timed_out, 20)
    first = checks[0]
    assert first.id == "deep.import" and first.status == "fail"
    assert "died in step 'import' (signal 11)" in first.found
    assert "version mismatch" in first.found
    assert first.details["classification"]["id"] == "undefined_symbol"
    assert [c.status for c in checks[1:]] == ["skipped"] * 4


def test_probe_missing_libhccl_means_set_env(tmp_path):
    events = [{"step": "import", "start": True},
              {"step": "import", "ok": False,
               "error": "OSError: libhccl.so: cannot open shared object file: No such file or directory"}]
    c = deep.checks_from_events(events, "", 3, False, 60)[0]
    assert c.status == "fail" and "set_env.sh was not sourced" in c.found
    assert c.fix.startswith("source /usr/local/Ascend/ascend-toolkit/set_env.sh")


def test_probe_eh9999_means_python_deps():
    cls = deep.classify("RuntimeError: EH9999: Inner Error! init env failed")
    assert cls["id"] == "python_deps"


def test_probe_hang_is_killed(tmp_path):
    py = fake_python(tmp_path, """\
        echo '@@ascendify-deep {"step": "import", "start": true}'
        echo '@@ascendify-deep {"step": "import", "ok": true, "torch": "2.7.1", "torch_npu": "2.7.1"}'
        echo '@@ascendify-deep {"step": "available", "start": true}'
        exec sleep 30
        """)
    events, err, rc, timed_out = deep.run_probe(py, None, timeout=1)
    checks = deep.checks_from_events(events, err, rc, timed_out, 1)
    assert timed_out
    assert checks[0].status == "ok" and "torch_npu 2.7.1" in checks[0].found
    assert checks[1].status == "fail" and "hung in step 'available'" in checks[1].found


def test_probe_all_steps_ok():
    events = [{"step": "import", "ok": True, "torch": "2.7.1", "torch_npu": "2.7.1", "cann": "8.3.RC1"},
              {"step": "available", "ok": True, "available": True},
              {"step": "device", "ok": True, "count": 8, "name": "Ascend910B3"},
              {"step": "tensor_op", "ok": True, "value": 8.0},
              {"step": "hccl", "ok": True, "value": 2.0}]
    checks = deep.checks_from_events(events, "", 0, False, 60)
    assert [c.status for c in checks] == ["ok"] * 5
    assert checks[2].found == "8 device(s); device 0 is Ascend910B3"


def test_probe_not_available():
    events = [{"step": "import", "ok": True, "torch": "2.7.1", "torch_npu": "2.7.1"},
              {"step": "available", "ok": True, "available": False}]
    checks = deep.checks_from_events(events, "[ERROR] drvGetDevNum failed EL0001", 4, False, 60)
    assert checks[1].status == "fail" and "no usable NPU" in checks[1].found


def test_probe_wrong_result():
    events = [{"step": "import", "ok": True}, {"step": "available", "ok": True, "available": True},
              {"step": "device", "ok": True, "count": 1, "name": "x"}, {"step": "tensor_op", "ok": True, "value": 7.0}]
    checks = deep.checks_from_events(events, "", 0, False, 60)
    assert checks[3].status == "fail" and "expected 8.0" in checks[3].found


# ----------------------------------------------------------------------------- CLI

def test_cli_json_on_fake_root_gates_ci(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    root, env, smi = stack(tmp_path, torch_npu="2.7.1.post4", cann="8.2.RC1", cann_inner=22)
    env_file = tmp_path / "env.txt"
    env_file.write_text("\n".join(f"{k}={v}" for k, v in env.items()) + "\n")
    res = CliRunner().invoke(doctor_cmd, ["--root", root, "--npu-smi", smi, "--env-file", str(env_file),
                                          "--format", "json"], standalone_mode=False)
    assert res.exception is None, res.output
    assert res.return_value == 1
    doc = json.loads(res.output)
    jsonschema.validate(doc, schema())
    failed = {c["id"] for c in doc["checks"] if c["status"] == "fail"}
    assert failed == {"matrix.torch_npu_cann"}
    assert doc["facts"]["cann"] == "8.2.RC1"


def test_cli_text_report_is_short(tmp_path):
    root, env, smi = stack(tmp_path)
    env_file = tmp_path / "env.txt"
    env_file.write_text("".join(f"export {k}='{v}'\n" for k, v in env.items()))
    res = CliRunner().invoke(doctor_cmd, ["--root", root, "--npu-smi", smi, "--env-file", str(env_file)],
                             standalone_mode=False)
    assert res.exception is None, res.output
    assert res.return_value == 0
    lines = res.output.strip().splitlines()
    assert lines[0].startswith("ascendify doctor (root ") and "CANN 8.3.RC1" in lines[0]
    assert lines[-1].endswith("— exit 0")
    assert len(lines) < 30


def test_cli_no_stack_root(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    res = CliRunner().invoke(doctor_cmd, ["--root", str(root), "--chip", "a3"], standalone_mode=False)
    assert res.exception is None and res.return_value == 0
    assert "No Ascend stack found under" in res.output and "Atlas A3" in res.output
    res2 = CliRunner().invoke(doctor_cmd, ["--root", str(root), "--require-npu"], standalone_mode=False)
    assert res2.return_value == 1


def test_cli_bad_arguments_are_one_line_errors(tmp_path):
    from ascendify.errors import AscendifyError
    res = CliRunner().invoke(doctor_cmd, ["--root", str(tmp_path / "nope")], standalone_mode=False)
    assert isinstance(res.exception, AscendifyError) and "not a directory" in str(res.exception)
    res = CliRunner().invoke(doctor_cmd, ["--npu-smi", str(tmp_path / "nope")], standalone_mode=False)
    assert isinstance(res.exception, AscendifyError) and "--npu-smi" in str(res.exception)


def test_read_env_file_formats(tmp_path):
    p = tmp_path / "e"
    p.write_bytes(b"A=1\0B=x=y\0")
    assert read_env_file(str(p)) == {"A": "1", "B": "x=y"}
    p.write_text("# c\nexport C=\"q r\"\nnot a line\n")
    assert read_env_file(str(p)) == {"C": "q r"}


# ----------------------------------------------------------------------------- parsers / sysroot

def test_parse_a2_table_pairs_without_space():
    text = F.smi_a2(["910B4-1", "910B4-1"], hbm_used=[3394, 27547])
    info = P.parse_npu_smi(text)
    assert info.layout == "A2" and info.version == "25.3.rc1"
    assert [(c.npu, c.name, c.hbm_used, c.hbm_total) for c in info.chips] == [
        (0, "910B4-1", 3394, 65536), (1, "910B4-1", 27547, 65536)]
    assert info.idle_npus == [0, 1]


def test_parse_a3_table_two_chips_per_npu():
    info = P.parse_npu_smi(F.smi_a3(2))
    assert info.layout == "A3"
    assert [(c.npu, c.chip, c.phy_id) for c in info.chips] == [(0, 0, 0), (0, 1, 1), (1, 0, 2), (1, 1, 3)]


def test_parse_310p_table_no_hbm():
    info = P.parse_npu_smi(F.smi_310p(1, procs=[(8, 0, 5, "", 300)]))
    c = info.chips[0]
    assert info.layout == "310P" and (c.npu, c.device_id, c.mem_used, c.mem_total, c.hbm_total) == (8, 0, 1800, 21527, None)
    assert [(p.pid, p.name, p.memory_mb) for p in info.processes] == [(5, "", 300)]


def test_board_soc_version():
    assert P.board_soc_version(P.parse_board(F.BOARD_A3)) == "Ascend910_9392"
    assert P.board_soc_version({"Chip Name": "950PR", "NPU Name": "NA"}) == "Ascend950PR"
    assert P.board_soc_version({}) is None


def test_parse_kv_and_codes():
    kv, bad = P.parse_kv(F.driver_info("25.3.rc1", 23, (21, 22, 23)) + "garbage line\n")
    assert kv["version"] == "25.3.rc1" and kv["innerversion"].startswith("V100R001C23")
    assert P.compat_codes(kv["compatible_version"]) == ["C21", "C22", "C23"]
    assert P.fw_range(kv["compatible_version_fw"]) == ("7.0.0", "8.9.9")
    assert bad == ["line 9 is not key=value: 'garbage line'"]
    assert P.fw_range("[7.0.0") is None


def test_driver_key_order():
    vs = ["25.0.rc1.1", "24.1.rc2", "24.1.0", "24.1.rc1", "26.0.RC1", "24.1.rc2.1"]
    assert sorted(vs, key=P.driver_key) == ["24.1.rc1", "24.1.rc2", "24.1.rc2.1", "24.1.0", "25.0.rc1.1", "26.0.RC1"]


def test_version_cfg():
    cfg = P.parse_version_cfg("# version: 1.0\nopp_kernel_running_version=[7.6.0.1.220:8.0.0]\n")
    assert cfg == {"opp_kernel": {"running": ("7.6.0.1.220", "8.0.0")}}


def test_sysroot_reroots_absolute_symlinks(tmp_path):
    root = tmp_path / "r"
    (root / "opt/real").mkdir(parents=True)
    (root / "opt/real/f.txt").write_text("hi")
    os.symlink("/opt/real", root / "opt/link")
    sr = SysRoot(str(root))
    assert sr.read_text("/opt/link/f.txt") == ("hi", None)
    assert sr.glob("/opt/link/*.txt") == ["/opt/link/f.txt"]
    text, err = sr.read_text("/opt/missing")
    assert text is None and err == "/opt/missing: not found"
