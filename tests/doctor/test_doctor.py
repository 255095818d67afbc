"""ascendify doctor against fake install trees (formats: op-support-and-versions.md §7)."""

from __future__ import annotations

import json
import os

import pytest

from ascendify.doctor.core import Options, run_doctor
from ascendify.doctor.model import schema

from . import fakes as F


def stack(tmp_path, *, cann="8.3.RC1", cann_inner=23, cann_compat=(19, 20, 21, 22, 23), layout="ascend-toolkit",
          ops=None, driver="25.3.rc1", driver_inner=23, driver_compat=(19, 20, 21, 22, 23), fw="7.7.0.1.231",
          fw_range="[7.0.0,8.9.9]", python="3.11", torch="2.7.1", torch_npu="2.7.1", torch_pin="==2.7.1.*",
          numpy="1.26.4", deps=("decorator", "sympy", "cffi", "attr", "psutil"), smi=None, env_extra=None,
          sourced=True, tbe=True, nnal=None):
    root = str(tmp_path / "root")
    os.makedirs(root, exist_ok=True)
    home = F.make_cann(root, version=cann, inner=cann_inner, compat=cann_compat, layout=layout, ops=ops, tbe=tbe,
                       nnal=nnal)
    if driver:
        F.make_driver(root, version=driver, inner=driver_inner, compat=driver_compat, fw=fw, fw_range=fw_range)
    F.make_site(root, python=python, torch=torch, torch_npu=torch_npu, torch_pin=torch_pin, numpy=numpy, deps=deps)
    F.make_dev(root, 2)
    env = F.set_env(home, extra=env_extra) if sourced else {"PATH": "/usr/bin:/bin", **(env_extra or {})}
    smi_path = str(tmp_path / "npu-smi.txt")
    with open(smi_path, "w") as fh:
        fh.write(smi if smi is not None else F.smi_a2(["910B3", "910B3"], version=driver or "25.3.rc1"))
    return root, env, smi_path


def doctor(root, env, smi=None, **kw):
    return run_doctor(Options(root=root, env=env, npu_smi=smi, timeout=kw.pop("timeout", 10), **kw))


def status(rep, cid):
    c = rep.get(cid)
    assert c is not None, f"no check {cid}: {[x.id for x in rep.checks]}"
    return c.status


# ----------------------------------------------------------------------------- matching stack

def test_matching_stack_is_all_ok(tmp_path):
    root, env, smi = stack(tmp_path)
    rep = doctor(root, env, smi)
    bad = [(c.id, c.status, c.found) for c in rep.checks if c.status in ("warn", "fail")]
    assert bad == []
    assert rep.status == "ok" and rep.exit_code() == 0 and rep.stack_present
    assert rep.facts["cann"] == "8.3.RC1"
    assert rep.facts["cann_path"] == "/usr/local/Ascend/ascend-toolkit/latest"
    assert rep.facts["torch_npu"] == "2.7.1" and rep.facts["driver"] == "25.3.rc1"
    assert rep.facts["python"] == "3.11"
    assert rep.chip["detected"] == ["Ascend910B3"] and rep.chip["family"] == "910B" and rep.chip["bf16"] is True
    assert "v2.7.1-7.2.0" in rep.get("matrix.torch_npu_cann").found
    assert status(rep, "driver.compat_codes") == "ok"
    assert status(rep, "driver.firmware_range") == "ok"
    assert status(rep, "env.set_env") == "ok"
    assert status(rep, "env.python_deps") == "ok"


def test_json_report_matches_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    root, env, smi = stack(tmp_path, torch_npu="2.7.1.post4", cann="8.2.RC1", cann_inner=22)
    rep = doctor(root, env, smi)
    doc = json.loads(json.dumps(rep.to_dict()))
    jsonschema.validate(doc, schema())
    assert doc["status"] == "fail" and doc["exit_code"] == 1
    ids = [c["id"] for c in doc["checks"]]
    assert len(ids) == len(set(ids))


# ----------------------------------------------------------------------------- mismatches

def test_torch_npu_needs_other_cann_names_matching_releases(tmp_path):
    root, env, smi = stack(tmp_path, torch_npu="2.7.1.post4", cann="8.2.RC1", cann_inner=22)
    c = doctor(root, env, smi).get("matrix.torch_npu_cann")
    assert c.status == "fail"
    assert "torch_npu 2.7.1.post4 needs CANN 9.0.0; installed CANN 8.2.RC1" in c.found
    assert c.fix.startswith("install torch_npu 2.6.0") and c.fix.endswith("or CANN 9.0.0")
    assert c.details["torch_npu_for_installed_cann"][0] == "2.6.0"


def test_unknown_newer_torch_npu_post_falls_back_to_nearest_row(tmp_path):
    root, env, smi = stack(tmp_path, torch_npu="2.7.1.post11", cann="9.1.0", cann_inner=23, layout="cann", ops="910b")
    c = doctor(root, env, smi).get("matrix.torch_npu_cann")
    assert c.status == "warn"
    assert "nearest known row: 2.7.1.post8 for CANN 9.1.0" in c.found


def test_unknown_newer_cann_says_so(tmp_path):
    root, env, smi = stack(tmp_path, cann="9.2.0", layout="cann", ops="910b", torch="2.12.0", torch_npu="2.12.0",
                           torch_pin="==2.12.0.*")
    rep = doctor(root, env, smi)
    c = rep.get("cann.toolkit")
    assert c.status == "warn" and "newer than the knowledge base (newest: 9.1.0)" in c.found
    assert rep.get("matrix.torch_npu_cann").status == "fail"  # 2.12.0 is the 9.1.0 row


def test_torch_does_not_match_torch_npu_pin(tmp_path):
    root, env, smi = stack(tmp_path, torch="2.6.0")
    rep = doctor(root, env, smi)
    pin = rep.get("torch_npu.torch_pin")
    assert pin.status == "fail" and "requires torch==2.7.1.*" in pin.found
    assert pin.fix.startswith("pip install 'torch==2.7.1.*'")
    assert status(rep, "matrix.torch_torch_npu") == "fail"


def test_python_outside_torch_table(tmp_path):
    root, env, smi = stack(tmp_path, python="3.8")
    c = doctor(root, env, smi).get("matrix.python")
    assert c.status == "fail" and c.expected == "Python 3.9–3.13"


def test_driver_too_old_for_cann(tmp_path):
    root, env, smi = stack(tmp_path, driver="24.1.rc1", driver_inner=15, driver_compat=(15,), fw="7.1.0.6.220")
    rep = doctor(root, env, smi)
    c = rep.get("driver.compat_codes")
    assert c.status == "fail"
    assert "driver 24.1.rc1 accepts CANN codes C15; CANN 8.3.RC1 is C23" in c.found
    assert "upgrade the driver+firmware" in c.fix
    assert status(rep, "devices.npu_smi") == "ok"  # table header and version.info agree (24.1.rc1)


def test_driver_recommended_pair(tmp_path):
    root, env, smi = stack(tmp_path, cann="8.2.RC1", cann_inner=22, torch="2.6.0", torch_npu="2.6.0",
                           torch_pin="==2.6.0.*", driver="24.1.rc2", driver_inner=18, driver_compat=(18, 19, 20, 21, 22),
                           fw="7.3.0.1.231")
    rep = doctor(root, env, smi)
    c = rep.get("driver.recommended")
    assert c.status == "warn" and "pairs driver 25.0.rc1.1 + firmware 7.7.0.1.231" in c.found
    assert status(rep, "matrix.torch_npu_cann") == "ok"


def test_firmware_outside_driver_range(tmp_path):
    root, env, smi = stack(tmp_path, fw="6.4.0.4.220")
    c = doctor(root, env, smi).get("driver.firmware_range")
    assert c.status == "fail" and "[7.0.0, 8.9.9]" in c.found


def test_npu_smi_version_differs_from_driver_file(tmp_path):
    root, env, smi = stack(tmp_path, smi=F.smi_a2(["910B3"], version="24.1.rc2"))
    c = doctor(root, env, smi).get("devices.npu_smi")
    assert c.status == "warn" and "driver version.info says 25.3.rc1" in c.found


def test_ops_package_for_another_chip(tmp_path):
    root, env, smi = stack(tmp_path, cann="8.5.0", layout="cann", ops="310p", torch_npu="2.6.0.post5",
                           torch="2.6.0", torch_pin="==2.6.0.*")
    rep = doctor(root, env, smi)
    assert rep.facts["cann_path"] == "/usr/local/Ascend/cann"
    c = rep.get("cann.ops")
    assert c.status == "fail" and "Ascend-cann-310p-ops" in c.found
    assert c.fix == "install Ascend-cann-910b-ops_8.5.0_linux-<arch>.run"
    assert status(rep, "matrix.torch_npu_cann") == "ok"


def test_ops_package_missing_on_new_layout(tmp_path):
    root, env, smi = stack(tmp_path, cann="8.5.0", layout="cann", torch_npu="2.6.0.post5", torch="2.6.0",
                           torch_pin="==2.6.0.*")
    c = doctor(root, env, smi).get("cann.ops")
    assert c.status == "warn" and "Ascend-cann-910b-ops_8.5.0" in c.fix


def test_chip_requested_differs_from_detected(tmp_path):
    root, env, smi = stack(tmp_path)
    c = doctor(root, env, smi, chip="310p").get("devices.chips")
    assert c.status == "warn" and "you asked for 310P" in c.found


# ----------------------------------------------------------------------------- environment

def test_set_env_not_sourced(tmp_path):
    root, env, smi = stack(tmp_path, sourced=False)
    rep = doctor(root, env, smi)
    c = rep.get("env.set_env")
    assert c.status == "fail"
    assert "ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, ASCEND_OPP_PATH not set" in c.found
    assert c.fix.startswith("source /usr/local/Ascend/ascend-toolkit/set_env.sh")
    deps = rep.get("env.python_deps")
    assert deps.status == "fail" and "not on PYTHONPATH" in deps.found


def test_set_env_points_at_missing_runtime(tmp_path):
    root, env, smi = stack(tmp_path)
    os.rmdir(os.path.join(root, "usr/local/Ascend/ascend-toolkit/8.3.RC1/runtime"))
    c = doctor(root, env, smi).get("env.set_env")
    assert c.status == "fail" and "$ASCEND_HOME_PATH/runtime missing" in c.found


def test_ld_library_path_missing_cann_lib(tmp_path):
    root, env, smi = stack(tmp_path)
    env["LD_LIBRARY_PATH"] = "/usr/lib"
    c = doctor(root, env, smi).get("env.set_env")
    assert c.status == "fail" and "LD_LIBRARY_PATH lacks /usr/local/Ascend/ascend-toolkit/latest/lib64" in c.found


@pytest.mark.parametrize("cann,inner,expect", [("8.2.RC1", 22, "fail"), ("8.5.0", 23, "warn"), ("9.1.0", 23, "ok")])
def test_numpy2_against_cann(tmp_path, cann, inner, expect):
    layout = "ascend-toolkit" if cann.startswith("8.2") else "cann"
    root, env, smi = stack(tmp_path, cann=cann, cann_inner=inner, numpy="2.1.3", layout=layout, ops="910b")
    c = doctor(root, env, smi).get("env.numpy")
    assert c.status == expect
    if expect == "fail":
        assert c.fix == "pip install 'numpy<2'" and "vllm-ascend#1875" in c.source


def test_numpy1_with_old_cann_is_ok(tmp_path):
    root, env, smi = stack(tmp_path, cann="8.2.RC1", cann_inner=22, numpy="1.26.4")
    assert doctor(root, env, smi).get("env.numpy").status == "ok"


def test_missing_cann_python_deps(tmp_path):
    root, env, smi = stack(tmp_path, deps=("sympy", "cffi", "attr"))
    c = doctor(root, env, smi).get("env.python_deps")
    assert c.status == "fail" and c.found == "missing: decorator, psutil"
    assert c.fix == "pip install decorator psutil"


def test_tbe_missing_everywhere(tmp_path):
    root, env, smi = stack(tmp_path, tbe=False)
    c = doctor(root, env, smi).get("env.python_deps")
    assert c.status == "fail" and "'tbe' not found" in c.found and c.fix == "reinstall the CANN toolkit"


def test_visible_devices(tmp_path):
    root, env, smi = stack(tmp_path, env_extra={"ASCEND_RT_VISIBLE_DEVICES": "0,5"})
    c = doctor(root, env, smi).get("env.visible_devices")
    assert c.status == "fail" and "ids ≥ 2" in c.found
    root2, env2, smi2 = stack(tmp_path / "b", env_extra={"CUDA_VISIBLE_DEVICES": "0,1"})
    c2 = doctor(root2, env2, smi2).get("env.visible_devices")
    assert c2.status == "warn" and c2.fix.startswith("export ASCEND_RT_VISIBLE_DEVICES=0,1")
    root3, env3, smi3 = stack(tmp_path / "c", env_extra={"ASCEND_RT_VISIBLE_DEVICES": "1"})
    assert doctor(root3, env3, smi3).get("env.visible_devices").status == "ok"


@pytest.mark.parametrize("value,expect", [
    ("expandable_segments:True", "ok"),
    ("max_split_size_mb:128,garbage_collection_threshold:0.6", "ok"),
    ("expandable_segments:true", "fail"),
    ("max_split_size_mb=128", "fail"),
    ("garbage_collection_threshold:1.5", "fail"),
    ("backend:cudaMallocAsync", "fail"),
])
def test_alloc_conf_syntax(tmp_path, value, expect):
    root, env, smi = stack(tmp_path, env_extra={"PYTORCH_NPU_ALLOC_CONF": value})
    assert doctor(root, env, smi).get("env.alloc_conf").status == expect


@pytest.mark.parametrize("var,value,smi_kind,expect", [
    ("HCCL_CONNECT_TIMEOUT", "60", "a2", "fail"),
    ("HCCL_CONNECT_TIMEOUT", "600", "a2", "ok"),
    ("HCCL_EXEC_TIMEOUT", "20000", "a2", "ok"),
    ("HCCL_EXEC_TIMEOUT", "20000", "310p", "fail"),
    ("TASK_QUEUE_ENABLE", "3", "a2", "fail"),
    ("HCCL_CONNECT_TIMEOUT", "abc", "a2", "fail"),
    ("ASCEND_LAUNCH_BLOCKING", "1", "a2", "warn"),
])
def test_env_var_ranges(tmp_path, var, value, smi_kind, expect):
    smi = F.smi_a2(["910B3", "910B3"]) if smi_kind == "a2" else F.smi_310p(2)
    root, env, path = stack(tmp_path, smi=smi, env_extra={var: value})
    c = doctor(root, env, path).get("env.vars")
    assert c.status == expect, c.found


# ----------------------------------------------------------------------------- devices

def test_busy_device_held_by_other_process(tmp_path):
    smi = F.smi_a2(["910B3", "910B3"], hbm_used=[3300, 45000], procs=[(1, 0, 424242, "python3", 41000)])
    root, env, path = stack(tmp_path, smi=smi)
    c = doctor(root, env, path).get("devices.memory")
    assert c.status == "warn"
    assert "NPU 1: pid 424242 python3 41000 MB" in c.found
    assert c.details["processes"][0]["pid"] == 424242


def test_memory_used_without_visible_process(tmp_path):
    smi = F.smi_a2(["910B3", "910B3"], hbm_used=[3300, 60000])
    root, env, path = stack(tmp_path, smi=smi)
    c = doctor(root, env, path).get("devices.memory")
    assert c.status == "warn" and "NPU 1 chip 0: 60000/65536 MB used, no process listed" in c.found


def test_idle_devices_ok(tmp_path):
    root, env, path = stack(tmp_path)
    assert doctor(root, env, path).get("devices.memory").status == "ok"


def test_unhealthy_chip(tmp_path):
    smi = F.smi_a2(["910B3", "910B3"], health=["OK", "Alarm"])
    root, env, path = stack(tmp_path, smi=smi)
    c = doctor(root, env, path).get("devices.chips")
    assert c.status == "fail" and "NPU 1 chip 0: Alarm" in c.found


def test_a3_board_soc_version_via_fake_npu_smi(tmp_path):
    exe = F.fake_npu_smi(str(tmp_path / "bin"), F.smi_a3(1), board=F.BOARD_A3)
    root, env, _ = stack(tmp_path, cann="9.1.0", layout="cann", ops="910b", torch="2.12.0", torch_npu="2.12.0",
                         torch_pin="==2.12.0.*")
    rep = doctor(root, env, exe)
    assert rep.chip["detected"] == ["Ascend910_9392"]
    assert rep.chip["family"] == "910C" and rep.chip["bf16"] is True
    c = rep.get("cann.ops")
    assert c.status == "warn" and "but the chip is 910C" in c.found  # A3 package name unverified → warn


def test_a3_saved_output_without_board(tmp_path):
    root, env, path = stack(tmp_path, smi=F.smi_a3(1))
    rep = doctor(root, env, path)
    assert rep.chip["family"] == "910C"
    assert rep.chip["detected"] == ["Ascend910_93xx"]


def test_310p_layout(tmp_path):
    root, env, path = stack(tmp_path, smi=F.smi_310p(2, procs=[(16, 0, 777, "infer", 900)]))
    rep = doctor(root, env, path)
    assert rep.chip["detected"] == ["Ascend310P3"] and rep.chip["bf16"] is False
    assert "NPU 16: pid 777 infer 900 MB" in rep.get("devices.memory").found


def test_npu_smi_hangs(tmp_path):
    exe = F.fake_npu_smi(str(tmp_path / "bin"), F.smi_a2(["910B3"]), sleep=30)
    root, env, _ = stack(tmp_path)
    c = doctor(root, env, exe, timeout=1).get("devices.npu_smi")
    assert c.status == "fail" and "did not finish within 1 s" in c.found


def test_npu_smi_errors(tmp_path):
    exe = F.fake_npu_smi(str(tmp_path / "bin"), "", rc=1)
    root, env, _ = stack(tmp_path)
    c = doctor(root, env, exe).get("devices.npu_smi")
    assert c.status == "fail" and "dcmi module initialize failed" in c.found


def test_missing_dev_nodes_in_container(tmp_path):
    root, env, path = stack(tmp_path)
    for n in ("davinci0", "davinci1", "davinci_manager", "devmm_svm", "hisi_hdc"):
        os.unlink(os.path.join(root, "dev", n))
    c = doctor(root, env, path).get("devices.dev_nodes")
    assert c.status == "fail" and "--device /dev/davinci0" in c.fix


# ----------------------------------------------------------------------------- garbage

def test_binary_toolkit_info(tmp_path):
    root, env, smi = stack(tmp_path)
    F.write_bytes(root, "/usr/local/Ascend/ascend-toolkit/8.3.RC1/aarch64-linux/ascend_toolkit_install.info",
                  b"\x00\x01\x02garbage\x00")
    rep = doctor(root, env, smi)
    c = rep.get("cann.toolkit")
    assert c.status == "fail" and "binary or corrupted" in c.found
    assert status(rep, "matrix.torch_npu_cann") == "skipped"


def test_truncated_toolkit_info(tmp_path):
    root, env, smi = stack(tmp_path)
    F.write(root, "/usr/local/Ascend/ascend-toolkit/8.3.RC1/aarch64-linux/ascend_toolkit_install.info",
            "package_name=Ascend-cann-toolkit\nvers")
    c = doctor(root, env, smi).get("cann.toolkit")
    assert c.status == "fail" and "no version= line" in c.found and "line 2 is not key=value" in c.found


def test_garbled_version_value(tmp_path):
    root, env, smi = stack(tmp_path)
    F.write(root, "/usr/local/Ascend/ascend-toolkit/8.3.RC1/aarch64-linux/ascend_toolkit_install.info",
            "version=%%%\n")
    c = doctor(root, env, smi).get("cann.toolkit")
    assert c.status == "fail" and "'%%%' is not a CANN version" in c.found


def test_garbage_driver_and_firmware(tmp_path):
    root, env, smi = stack(tmp_path)
    F.write(root, "/usr/local/Ascend/driver/version.info", "@@@@ not a version file\n")
    F.write(root, "/usr/local/Ascend/firmware/version.info", "Version=\n")
    rep = doctor(root, env, smi)
    assert status(rep, "driver.version") == "fail" and "no readable Version= line" in rep.get("driver.version").found
    assert status(rep, "firmware.version") == "fail"
    assert status(rep, "driver.compat_codes") == "skipped"


def test_garbage_npu_smi_output(tmp_path):
    root, env, smi = stack(tmp_path, smi="Segmentation fault\n\x1b[0m|||\n")
    c = doctor(root, env, smi).get("devices.npu_smi")
    assert c.status == "fail" and "could not parse" in c.found


def test_truncated_npu_smi_output(tmp_path):
    full = F.smi_a2(["910B3", "910B3"])
    cut = full[: full.index("0000:C2")]
    root, env, smi = stack(tmp_path, smi=cut)
    c = doctor(root, env, smi).get("devices.npu_smi")
    assert c.status == "warn" and "name row without a metric row" in c.found


def test_garbage_metadata(tmp_path):
    root, env, smi = stack(tmp_path)
    sp = os.path.join(root, "usr/local/lib/python3.11/site-packages")
    F.write(root, "/usr/local/lib/python3.11/site-packages/torch_npu-2.7.1.dist-info/METADATA", "\x00\xff garbage")
    rep = doctor(root, env, smi)
    assert os.path.isdir(sp)
    c = rep.get("torch_npu.installed")
    assert c.status == "fail" and "torch_npu-2.7.1.dist-info/METADATA is unreadable" in c.found


def test_permission_denied_is_a_result(tmp_path, monkeypatch):
    import builtins
    root, env, smi = stack(tmp_path)
    real_open = builtins.open
    target = os.path.join(root, "usr/local/Ascend/driver/version.info")

    def fake_open(path, *a, **k):
        if os.path.abspath(str(path)) == target:
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", fake_open)
    c = doctor(root, env, smi).get("driver.version")
    assert c.status == "fail" and "permission denied" in c.found


# ----------------------------------------------------------------------------- no stack

def test_empty_root_is_no_stack_exit_0(tmp_path):
    root = str(tmp_path / "empty")
    os.makedirs(root)
    rep = doctor(root, {"PATH": "/usr/bin"}, chip="910b")
    assert not rep.stack_present and rep.exit_code() == 0
    assert rep.get("cann.toolkit").status == "skipped"
    assert "Ascend-cann-910b-ops_9.1.0" in rep.get("cann.toolkit").fix
    assert "Ascend-hdk-910b-npu-driver_26.0.RC1" in rep.get("driver.version").fix
    assert rep.notes[0].startswith("No Ascend stack found under")


def test_empty_root_require_npu_fails(tmp_path):
    root = str(tmp_path / "empty")
    os.makedirs(root)
    rep = doctor(root, {}, require_npu=True)
    assert rep.exit_code() == 1 and rep.get("cann.toolkit").status == "fail"


def test_root_without_env_file_skips_env_checks(tmp_path):
    root, _env, smi = stack(tmp_path)
    rep = doctor(root, None, smi)
    c = rep.get("env.set_env")
    assert c.status == "skipped" and "--env-file" in c.fix
    # PYTHONPATH unknown: tbe found in the CANN install is enough
    assert rep.get("env.python_deps").status == "ok"


def test_nnal_version_must_follow_cann(tmp_path):
    root, env, smi = stack(tmp_path, nnal="8.2.RC1")
    c = doctor(root, env, smi).get("cann.nnal")
    assert c.status == "warn" and "CANN is 8.3.RC1" in c.found
    assert c.fix.startswith("install Ascend-cann-nnal_8.3.RC1")
    root2, env2, smi2 = stack(tmp_path / "b", nnal="8.3.RC1")
    assert doctor(root2, env2, smi2).get("cann.nnal").status == "ok"


def test_two_cann_installs_active_one_follows_ascend_home_path(tmp_path):
    root, env, smi = stack(tmp_path)
    F.write(root, "/usr/local/Ascend/ascend-toolkit/8.2.RC1/aarch64-linux/ascend_toolkit_install.info",
            F.toolkit_info("8.2.RC1", 22, (15, 18, 19, 20, 21, 22)))
    rep = doctor(root, env, smi)
    c = rep.get("cann.toolkit")
    assert rep.facts["cann"] == "8.3.RC1"
    assert "also installed: 8.2.RC1 at /usr/local/Ascend/ascend-toolkit/8.2.RC1" in c.found


def test_torch_npu_without_cann_fails(tmp_path):
    root = str(tmp_path / "r")
    F.make_site(root)
    rep = doctor(root, {"PATH": "/usr/bin", "ASCEND_HOME_PATH": "/opt/gone"})
    c = rep.get("cann.toolkit")
    assert rep.stack_present and c.status == "fail"
    assert "torch_npu 2.7.1 cannot start without it" in c.found and "ASCEND_HOME_PATH=/opt/gone" in c.found
    assert rep.exit_code() == 1


def test_cann_without_driver_is_a_warning(tmp_path):
    root, env, _smi = stack(tmp_path, driver=None)
    rep = doctor(root, env)
    assert rep.get("driver.version").status == "warn"
    assert "no NPU can run here" in rep.get("driver.version").found
    rep2 = doctor(root, env, require_npu=True)
    assert rep2.get("driver.version").status == "fail"


def test_unexpected_exception_becomes_a_result(tmp_path, monkeypatch):
    from ascendify.doctor import core
    root, env, smi = stack(tmp_path)

    def boom(self):
        raise ValueError("odd input")

    monkeypatch.setattr(core.Doctor, "check_matrix", boom)
    rep = doctor(root, env, smi)
    c = rep.get("matrix.internal_error")
    assert c.status == "fail" and "ValueError: odd input" in c.found
    assert rep.get("env.set_env").status == "ok"  # later stages still ran


def test_other_interpreter_via_python_option(tmp_path):
    import stat as st
    site = tmp_path / "site"
    F.write(str(site), "/torch-2.6.0.dist-info/METADATA", F.metadata("torch", "2.6.0"))
    py = tmp_path / "py"
    py.write_text(f"#!/bin/sh\necho '{{\"version\": \"3.10.4\", \"path\": [\"{site}\"]}}'\n")
    py.chmod(py.stat().st_mode | st.S_IXUSR)
    rep = run_doctor(Options(root="/", env={"PATH": "/nonexistent"}, python=str(py)))
    assert rep.facts["python"] == "3.10.4" and rep.facts["torch"] == "2.6.0"


def test_live_mode_finds_npu_smi_on_path(tmp_path):
    exe = F.fake_npu_smi(str(tmp_path / "bin"), F.smi_a2(["910B1"] * 4, procs=[(2, 0, 99, "train.py", 1200)]))
    rep = run_doctor(Options(root="/", env={"PATH": os.path.dirname(exe)}, timeout=10))
    assert rep.get("devices.npu_smi").status == "ok"
    assert rep.chip["detected"] == ["Ascend910B1"]
    assert "NPU 2: pid 99 train.py 1200 MB" in rep.get("devices.memory").found
    if not os.path.exists("/dev/davinci_manager"):
        assert rep.get("devices.dev_nodes").status == "fail"


def test_mixed_cann_components(tmp_path):
    root, env, smi = stack(tmp_path)
    F.write(root, "/usr/local/Ascend/ascend-toolkit/8.3.RC1/runtime/version.info", "Version=8.2.RC1\n")
    c = doctor(root, env, smi).get("cann.toolkit")
    assert c.status == "warn" and "components from other releases: runtime 8.2.RC1" in c.found
    root2, env2, smi2 = stack(tmp_path / "b")
    F.write(root2, "/usr/local/Ascend/ascend-toolkit/8.3.RC1/runtime/version.info", "Version=8.3.RC1\n")
    assert doctor(root2, env2, smi2).get("cann.toolkit").status == "ok"
